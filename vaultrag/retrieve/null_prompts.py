"""Prompts a vault is not about: the null set that calibrates unsolicited injection (inject.py).

Written for vaultrag (not taken from any dataset): what people type into a coding session that no
note answers, in several languages. `calibrate()` runs each against the vault and records how
strong the evidence looks by chance. Grouped by kind, because the decision is calibrated per kind
of prompt (inject.prompt_kind). Only reindex reads this module; the hook path never imports it.
"""
from __future__ import annotations

CODE = """
fix the flaky test in the scheduler module
add type hints to the public functions
refactor the config loader into smaller functions
why does the build fail on windows
bump the minimum python version to 3.10
rename the helper to something clearer
remove the unused imports
write a unit test for the date parser
the CI job times out after ten minutes, can you look
make the error message say which file was missing
split this function, it is over a hundred lines
add a --dry-run flag to the sync command
update the changelog for the next release
handle the empty list case in the reducer
run the linter and fix what it reports
this raises KeyError when the field is absent
support reading gzip compressed input files
make the retry loop use exponential backoff
move the constants to the top of the module
delete the deprecated endpoints
add logging around the database migration
the docstring is out of date, please update it
cache the result of the expensive lookup
convert the callbacks to async functions
check why coverage dropped in the last commit
pin the dependency that broke the build
replace the print statements with logging
make the tests run in parallel
add pagination to the list endpoint
validate the payload before saving it
return a 404 when the record does not exist
the import order is wrong, sort it
extract the duplicated code into a helper
speed up the slow query in the report view
add a docker compose file for local development
set up pre-commit hooks
write a migration that adds an index on user_id
fix the off by one error in the pagination
make the CLI print help when called without arguments
use pathlib instead of os.path
add a regression test for the crash
review my last commit
revert the previous change, it broke the layout
squash the fixup commits before merging
resolve the merge conflict in setup.py
what does this stack trace mean
explain what this function does
is there a race condition in this code
implement the missing method on the base class
make the parser accept trailing commas
close the file handle in the error path
stop swallowing exceptions in the worker
serialize the dataclass to json
add a timeout to the http client
lower the log level of that noisy warning
make this work on python 3.9 as well
upgrade the github actions to the latest versions
the snapshot test fails after the upgrade
generate the api docs from the docstrings
drop support for the old config format
allow an environment variable to override the port
the tests pass locally but fail in CI
add a benchmark for the encoder
fix the typo in the readme
reduce memory use when loading big files
stream the response instead of buffering it
make the function pure, no global state
add a progress bar to the download
write a small script that renames the files
make the build reproducible
use a context manager for the lock
add an integration test against a real database
the linter complains about line length
fix the deprecation warnings from the new version
format the code with the project's formatter
where is the entry point of this package
find where this variable is set
add a CONTRIBUTING file
lazy import the heavy module
make the output deterministic
bump version to 1.4.2
prepare the release notes
tidy up the test fixtures
handle unicode file names correctly
the function returns None instead of an empty dict
make the cache thread safe
add retries when the upstream returns 503
document the new option in the README
sort the keys so the diff is stable
implement a dry run mode for the deploy script
rewrite the loop as a list comprehension
let me know when the tests are green
can you make the hook exit 0 on errors
the query is slow on large tables, add an index
parse the date with a timezone
fix mypy errors in the models module
wire the new setting into the config dataclass
check that the migration is reversible
use a frozen dataclass for the result
profile the startup time of the command
the progress output is garbled on a narrow terminal
make the default config a package resource
add a test that the output is byte identical across runs
commit this with a clear message
open a pull request for this branch
push the branch and create the PR
""".strip().splitlines()

TOOLS = """
Run the test suite
Install the project dependencies
Show the git status
List files in the source directory
Check the installed Python version
Run the linter on changed files
Show the recent commit history
Build the package
Start the development server
Search the code for the function definition
Find all uses of the config class
Read the project README
Show the diff of the staged changes
Create a virtual environment
Run the type checker
Count lines of code per file
Check disk usage of the build folder
Print the environment variables
Show running processes
Compile the extension module
Run a single failing test verbosely
Format all Python files
Fetch the latest changes from the remote
Show which branch is checked out
List installed packages
Remove the build artifacts
Run the benchmark script
Check the size of the database file
Tail the application log
Grep for TODO comments
""".strip().splitlines()

CHAT = """
thanks, that works
ok, go ahead
yes please
looks good to me
hmm, not quite what I meant
can you try again
good morning
never mind
what can you do
stop for now
continue
great, next step
sorry, I was unclear
perfect
let's take a break
that's all for today
can you explain that more simply
I don't understand the last answer
please be more concise
do it the other way
how are you today
tell me a joke
what time is it
wow, that was fast
no, leave it as it was
""".strip().splitlines()

PERSONAL = """
what's a good recipe for banana pancakes
how many grams of protein should I eat a day
when is the next public holiday
what should I get my sister for her birthday
how do I get a stain out of a wool sweater
recommend a science fiction novel
what is the capital of mongolia
how tall is the eiffel tower
who won the football world cup in 1998
what is my bank account number
where did I park the car
how do I fix a dripping tap
is it going to rain this weekend
translate good night into italian
how long should I boil an egg
what are the symptoms of the flu
how do I train a puppy to sit
what's the best way to learn piano as an adult
how far is the moon from the earth
when did the roman empire fall
""".strip().splitlines()

OTHER_LANGUAGES = """
behebe den fehlschlagenden Test im Parser
füge Typannotationen zu den öffentlichen Funktionen hinzu
warum schlägt der Build unter Windows fehl
aktualisiere die Abhängigkeiten auf die neuesten Versionen
danke, das passt so
wie wird das Wetter morgen
corrige el test que falla en el módulo de fechas
añade pruebas unitarias para el analizador
¿por qué falla la compilación en CI?
gracias, perfecto
¿qué tiempo hará mañana?
corrige le test qui échoue dans le module de paiement
ajoute des annotations de type aux fonctions publiques
pourquoi la compilation échoue sous Windows
merci, c'est parfait
quelle heure est-il à Tokyo
исправь падающий тест в модуле расписания
добавь аннотации типов к публичным функциям
почему сборка падает на windows
спасибо, всё работает
какая завтра погода
修复调度模块中失败的测试
给公共函数加上类型注解
为什么在 Windows 上构建失败
谢谢，可以了
明天天气怎么样
napraw nieprzechodzący test w module dat
dodaj adnotacje typów do funkcji publicznych
dlaczego build nie przechodzi na windowsie
dzięki, działa
テストが失敗する原因を調べて
公開関数に型ヒントを追加して
ありがとう、完璧です
corrija o teste que falha no módulo de datas
adicione dicas de tipo às funções públicas
obrigado, funcionou
correggi il test che fallisce nel parser
aggiungi i type hint alle funzioni pubbliche
grazie, va bene così
repareer de falende test in de parser
""".strip().splitlines()

PROMPTS: dict[str, tuple[str, ...]] = {
    "code": tuple(CODE), "tools": tuple(TOOLS), "chat": tuple(CHAT), "personal": tuple(PERSONAL),
    "other_languages": tuple(OTHER_LANGUAGES),
}


def all_prompts() -> list[str]:
    return [p.strip() for group in PROMPTS.values() for p in group if p.strip()]
