"""A standard-library-only query encoder for Model2Vec static models.

A hook is a fresh process per prompt, and importing numpy + model2vec costs 0.3-1 s there. A Model2Vec
query embedding is only: BERT-style normalisation, pre-tokenisation, WordPiece, a lookup of one row per
token, the mean and an L2 norm. This module does exactly that with the standard library and a memory map
of ``model.safetensors``, reproducing ``StaticModel.encode`` (model2vec 0.10.0 with tokenizers 0.2x):

- the text is cut to ``max_length * median_token_length`` characters, then to ``max_length`` tokens
  (``max_length`` from config.json, default 512; ``None`` disables both cuts);
- added tokens (``[PAD]``, ``[UNK]``, ...) are matched in the raw text first, as ``tokenizers`` does;
- unknown-token ids are dropped after truncation (a word of more than ``max_input_chars_per_word``
  characters, or one WordPiece cannot cover, becomes one ``[UNK]`` and so disappears);
- the rows are int8, float16 or float32 (as stored; no scale), optionally remapped by a ``mapping``
  tensor and scaled by a ``weights`` tensor (vocabulary-quantised models);
- the mean is L2-normalised (norm + 1e-32); a text with no known token gives all zeros.

The Unicode tables below are those of the ``tokenizers`` Rust crates (older than Python's
``unicodedata`` in places, newer in others), so results do not drift with the Python version for the
properties they cover. ``tests/test_lean_encoder.py`` regenerates them from ``tokenizers`` and checks
every code point; ``python tests/test_lean_encoder.py --print-tables`` prints fresh ones.

Nothing here imports numpy, model2vec, tokenizers or tiktoken; the only imports are json, mmap, struct,
unicodedata and bisect.
"""
from __future__ import annotations

import json
import mmap
import os
import struct
import unicodedata
from bisect import bisect_right

__all__ = ["LeanEncoder", "LeanEncoderError", "model_files"]

DEFAULT_MAX_LENGTH = 512  # model2vec's DEFAULT_MAX_LENGTH, used when config.json has no max_length
NORM_EPSILON = 1e-32  # model2vec adds this to the norm before dividing

# Rust's char::is_whitespace (the Unicode White_Space property); BertPreTokenizer splits on these.
_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_CLEAN_TO_SPACE = frozenset(_WHITESPACE - {"\x0b", "\x0c", "\x85"})  # those three are controls: dropped
# BertNormalizer.handle_chinese_chars pads these with spaces (tokenizers' is_chinese_char).
_CJK = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

# Generated from tokenizers 0.23.3 (see the module docstring). Flat half-open ranges: start, end, ...
_CONTROL = (
    0x0, 0x9, 0xB, 0xD, 0xE, 0x20, 0x7F, 0xA0, 0xAD, 0xAE, 0x600, 0x606, 0x61C, 0x61D, 0x6DD, 0x6DE, 0x70F,
    0x710, 0x180E, 0x180F, 0x200B, 0x2010, 0x202A, 0x202F, 0x2060, 0x2065, 0x2066, 0x2070, 0xE000, 0xF900,
    0xFEFF, 0xFF00, 0xFFF9, 0xFFFC, 0xFFFD, 0xFFFE, 0x110BD, 0x110BE, 0x1BCA0, 0x1BCA4, 0x1D173, 0x1D17B,
    0xE0001, 0xE0002, 0xE0020, 0xE0080, 0xF0000, 0xFFFFE, 0x100000, 0x10FFFE,
)
_NONSPACING_MARK = (
    0x300, 0x370, 0x483, 0x488, 0x591, 0x5BE, 0x5BF, 0x5C0, 0x5C1, 0x5C3, 0x5C4, 0x5C6, 0x5C7, 0x5C8, 0x610,
    0x61B, 0x64B, 0x660, 0x670, 0x671, 0x6D6, 0x6DD, 0x6DF, 0x6E5, 0x6E7, 0x6E9, 0x6EA, 0x6EE, 0x711, 0x712,
    0x730, 0x74B, 0x7A6, 0x7B1, 0x7EB, 0x7F4, 0x816, 0x81A, 0x81B, 0x824, 0x825, 0x828, 0x829, 0x82E, 0x859,
    0x85C, 0x8E3, 0x903, 0x93A, 0x93B, 0x93C, 0x93D, 0x941, 0x949, 0x94D, 0x94E, 0x951, 0x958, 0x962, 0x964,
    0x981, 0x982, 0x9BC, 0x9BD, 0x9C1, 0x9C5, 0x9CD, 0x9CE, 0x9E2, 0x9E4, 0xA01, 0xA03, 0xA3C, 0xA3D, 0xA41,
    0xA43, 0xA47, 0xA49, 0xA4B, 0xA4E, 0xA51, 0xA52, 0xA70, 0xA72, 0xA75, 0xA76, 0xA81, 0xA83, 0xABC, 0xABD,
    0xAC1, 0xAC6, 0xAC7, 0xAC9, 0xACD, 0xACE, 0xAE2, 0xAE4, 0xB01, 0xB02, 0xB3C, 0xB3D, 0xB3F, 0xB40, 0xB41,
    0xB45, 0xB4D, 0xB4E, 0xB56, 0xB57, 0xB62, 0xB64, 0xB82, 0xB83, 0xBC0, 0xBC1, 0xBCD, 0xBCE, 0xC00, 0xC01,
    0xC3E, 0xC41, 0xC46, 0xC49, 0xC4A, 0xC4E, 0xC55, 0xC57, 0xC62, 0xC64, 0xC81, 0xC82, 0xCBC, 0xCBD, 0xCBF,
    0xCC0, 0xCC6, 0xCC7, 0xCCC, 0xCCE, 0xCE2, 0xCE4, 0xD01, 0xD02, 0xD41, 0xD45, 0xD4D, 0xD4E, 0xD62, 0xD64,
    0xDCA, 0xDCB, 0xDD2, 0xDD5, 0xDD6, 0xDD7, 0xE31, 0xE32, 0xE34, 0xE3B, 0xE47, 0xE4F, 0xEB1, 0xEB2, 0xEB4,
    0xEBA, 0xEBB, 0xEBD, 0xEC8, 0xECE, 0xF18, 0xF1A, 0xF35, 0xF36, 0xF37, 0xF38, 0xF39, 0xF3A, 0xF71, 0xF7F,
    0xF80, 0xF85, 0xF86, 0xF88, 0xF8D, 0xF98, 0xF99, 0xFBD, 0xFC6, 0xFC7, 0x102D, 0x1031, 0x1032, 0x1038,
    0x1039, 0x103B, 0x103D, 0x103F, 0x1058, 0x105A, 0x105E, 0x1061, 0x1071, 0x1075, 0x1082, 0x1083, 0x1085,
    0x1087, 0x108D, 0x108E, 0x109D, 0x109E, 0x135D, 0x1360, 0x1712, 0x1715, 0x1732, 0x1735, 0x1752, 0x1754,
    0x1772, 0x1774, 0x17B4, 0x17B6, 0x17B7, 0x17BE, 0x17C6, 0x17C7, 0x17C9, 0x17D4, 0x17DD, 0x17DE, 0x180B,
    0x180E, 0x18A9, 0x18AA, 0x1920, 0x1923, 0x1927, 0x1929, 0x1932, 0x1933, 0x1939, 0x193C, 0x1A17, 0x1A19,
    0x1A1B, 0x1A1C, 0x1A56, 0x1A57, 0x1A58, 0x1A5F, 0x1A60, 0x1A61, 0x1A62, 0x1A63, 0x1A65, 0x1A6D, 0x1A73,
    0x1A7D, 0x1A7F, 0x1A80, 0x1AB0, 0x1ABE, 0x1B00, 0x1B04, 0x1B34, 0x1B35, 0x1B36, 0x1B3B, 0x1B3C, 0x1B3D,
    0x1B42, 0x1B43, 0x1B6B, 0x1B74, 0x1B80, 0x1B82, 0x1BA2, 0x1BA6, 0x1BA8, 0x1BAA, 0x1BAB, 0x1BAE, 0x1BE6,
    0x1BE7, 0x1BE8, 0x1BEA, 0x1BED, 0x1BEE, 0x1BEF, 0x1BF2, 0x1C2C, 0x1C34, 0x1C36, 0x1C38, 0x1CD0, 0x1CD3,
    0x1CD4, 0x1CE1, 0x1CE2, 0x1CE9, 0x1CED, 0x1CEE, 0x1CF4, 0x1CF5, 0x1CF8, 0x1CFA, 0x1DC0, 0x1DF6, 0x1DFC,
    0x1E00, 0x20D0, 0x20DD, 0x20E1, 0x20E2, 0x20E5, 0x20F1, 0x2CEF, 0x2CF2, 0x2D7F, 0x2D80, 0x2DE0, 0x2E00,
    0x302A, 0x302E, 0x3099, 0x309B, 0xA66F, 0xA670, 0xA674, 0xA67E, 0xA69E, 0xA6A0, 0xA6F0, 0xA6F2, 0xA802,
    0xA803, 0xA806, 0xA807, 0xA80B, 0xA80C, 0xA825, 0xA827, 0xA8C4, 0xA8C5, 0xA8E0, 0xA8F2, 0xA926, 0xA92E,
    0xA947, 0xA952, 0xA980, 0xA983, 0xA9B3, 0xA9B4, 0xA9B6, 0xA9BA, 0xA9BC, 0xA9BD, 0xA9E5, 0xA9E6, 0xAA29,
    0xAA2F, 0xAA31, 0xAA33, 0xAA35, 0xAA37, 0xAA43, 0xAA44, 0xAA4C, 0xAA4D, 0xAA7C, 0xAA7D, 0xAAB0, 0xAAB1,
    0xAAB2, 0xAAB5, 0xAAB7, 0xAAB9, 0xAABE, 0xAAC0, 0xAAC1, 0xAAC2, 0xAAEC, 0xAAEE, 0xAAF6, 0xAAF7, 0xABE5,
    0xABE6, 0xABE8, 0xABE9, 0xABED, 0xABEE, 0xFB1E, 0xFB1F, 0xFE00, 0xFE10, 0xFE20, 0xFE30, 0x101FD, 0x101FE,
    0x102E0, 0x102E1, 0x10376, 0x1037B, 0x10A01, 0x10A04, 0x10A05, 0x10A07, 0x10A0C, 0x10A10, 0x10A38,
    0x10A3B, 0x10A3F, 0x10A40, 0x10AE5, 0x10AE7, 0x11001, 0x11002, 0x11038, 0x11047, 0x1107F, 0x11082,
    0x110B3, 0x110B7, 0x110B9, 0x110BB, 0x11100, 0x11103, 0x11127, 0x1112C, 0x1112D, 0x11135, 0x11173,
    0x11174, 0x11180, 0x11182, 0x111B6, 0x111BF, 0x111CA, 0x111CD, 0x1122F, 0x11232, 0x11234, 0x11235,
    0x11236, 0x11238, 0x112DF, 0x112E0, 0x112E3, 0x112EB, 0x11300, 0x11302, 0x1133C, 0x1133D, 0x11340,
    0x11341, 0x11366, 0x1136D, 0x11370, 0x11375, 0x114B3, 0x114B9, 0x114BA, 0x114BB, 0x114BF, 0x114C1,
    0x114C2, 0x114C4, 0x115B2, 0x115B6, 0x115BC, 0x115BE, 0x115BF, 0x115C1, 0x115DC, 0x115DE, 0x11633,
    0x1163B, 0x1163D, 0x1163E, 0x1163F, 0x11641, 0x116AB, 0x116AC, 0x116AD, 0x116AE, 0x116B0, 0x116B6,
    0x116B7, 0x116B8, 0x1171D, 0x11720, 0x11722, 0x11726, 0x11727, 0x1172C, 0x16AF0, 0x16AF5, 0x16B30,
    0x16B37, 0x16F8F, 0x16F93, 0x1BC9D, 0x1BC9F, 0x1D167, 0x1D16A, 0x1D17B, 0x1D183, 0x1D185, 0x1D18C,
    0x1D1AA, 0x1D1AE, 0x1D242, 0x1D245, 0x1DA00, 0x1DA37, 0x1DA3B, 0x1DA6D, 0x1DA75, 0x1DA76, 0x1DA84,
    0x1DA85, 0x1DA9B, 0x1DAA0, 0x1DAA1, 0x1DAB0, 0x1E8D0, 0x1E8D7, 0xE0100, 0xE01F0,
)
_PUNCTUATION = (
    0x21, 0x30, 0x3A, 0x41, 0x5B, 0x61, 0x7B, 0x7F, 0xA1, 0xA2, 0xA7, 0xA8, 0xAB, 0xAC, 0xB6, 0xB8, 0xBB,
    0xBC, 0xBF, 0xC0, 0x37E, 0x37F, 0x387, 0x388, 0x55A, 0x560, 0x589, 0x58B, 0x5BE, 0x5BF, 0x5C0, 0x5C1,
    0x5C3, 0x5C4, 0x5C6, 0x5C7, 0x5F3, 0x5F5, 0x609, 0x60B, 0x60C, 0x60E, 0x61B, 0x61C, 0x61E, 0x620, 0x66A,
    0x66E, 0x6D4, 0x6D5, 0x700, 0x70E, 0x7F7, 0x7FA, 0x830, 0x83F, 0x85E, 0x85F, 0x964, 0x966, 0x970, 0x971,
    0xAF0, 0xAF1, 0xDF4, 0xDF5, 0xE4F, 0xE50, 0xE5A, 0xE5C, 0xF04, 0xF13, 0xF14, 0xF15, 0xF3A, 0xF3E, 0xF85,
    0xF86, 0xFD0, 0xFD5, 0xFD9, 0xFDB, 0x104A, 0x1050, 0x10FB, 0x10FC, 0x1360, 0x1369, 0x1400, 0x1401, 0x166D,
    0x166F, 0x169B, 0x169D, 0x16EB, 0x16EE, 0x1735, 0x1737, 0x17D4, 0x17D7, 0x17D8, 0x17DB, 0x1800, 0x180B,
    0x1944, 0x1946, 0x1A1E, 0x1A20, 0x1AA0, 0x1AA7, 0x1AA8, 0x1AAE, 0x1B5A, 0x1B61, 0x1BFC, 0x1C00, 0x1C3B,
    0x1C40, 0x1C7E, 0x1C80, 0x1CC0, 0x1CC8, 0x1CD3, 0x1CD4, 0x2010, 0x2028, 0x2030, 0x2044, 0x2045, 0x2052,
    0x2053, 0x205F, 0x207D, 0x207F, 0x208D, 0x208F, 0x2308, 0x230C, 0x2329, 0x232B, 0x2768, 0x2776, 0x27C5,
    0x27C7, 0x27E6, 0x27F0, 0x2983, 0x2999, 0x29D8, 0x29DC, 0x29FC, 0x29FE, 0x2CF9, 0x2CFD, 0x2CFE, 0x2D00,
    0x2D70, 0x2D71, 0x2E00, 0x2E2F, 0x2E30, 0x2E43, 0x3001, 0x3004, 0x3008, 0x3012, 0x3014, 0x3020, 0x3030,
    0x3031, 0x303D, 0x303E, 0x30A0, 0x30A1, 0x30FB, 0x30FC, 0xA4FE, 0xA500, 0xA60D, 0xA610, 0xA673, 0xA674,
    0xA67E, 0xA67F, 0xA6F2, 0xA6F8, 0xA874, 0xA878, 0xA8CE, 0xA8D0, 0xA8F8, 0xA8FB, 0xA8FC, 0xA8FD, 0xA92E,
    0xA930, 0xA95F, 0xA960, 0xA9C1, 0xA9CE, 0xA9DE, 0xA9E0, 0xAA5C, 0xAA60, 0xAADE, 0xAAE0, 0xAAF0, 0xAAF2,
    0xABEB, 0xABEC, 0xFD3E, 0xFD40, 0xFE10, 0xFE1A, 0xFE30, 0xFE53, 0xFE54, 0xFE62, 0xFE63, 0xFE64, 0xFE68,
    0xFE69, 0xFE6A, 0xFE6C, 0xFF01, 0xFF04, 0xFF05, 0xFF0B, 0xFF0C, 0xFF10, 0xFF1A, 0xFF1C, 0xFF1F, 0xFF21,
    0xFF3B, 0xFF3E, 0xFF3F, 0xFF40, 0xFF5B, 0xFF5C, 0xFF5D, 0xFF5E, 0xFF5F, 0xFF66, 0x10100, 0x10103, 0x1039F,
    0x103A0, 0x103D0, 0x103D1, 0x1056F, 0x10570, 0x10857, 0x10858, 0x1091F, 0x10920, 0x1093F, 0x10940,
    0x10A50, 0x10A59, 0x10A7F, 0x10A80, 0x10AF0, 0x10AF7, 0x10B39, 0x10B40, 0x10B99, 0x10B9D, 0x11047,
    0x1104E, 0x110BB, 0x110BD, 0x110BE, 0x110C2, 0x11140, 0x11144, 0x11174, 0x11176, 0x111C5, 0x111CA,
    0x111CD, 0x111CE, 0x111DB, 0x111DC, 0x111DD, 0x111E0, 0x11238, 0x1123E, 0x112A9, 0x112AA, 0x114C6,
    0x114C7, 0x115C1, 0x115D8, 0x11641, 0x11644, 0x1173C, 0x1173F, 0x12470, 0x12475, 0x16A6E, 0x16A70,
    0x16AF5, 0x16AF6, 0x16B37, 0x16B3C, 0x16B44, 0x16B45, 0x1BC9F, 0x1BCA0, 0x1DA87, 0x1DA8C,
)
_LOWER_OVERRIDES = {0x1C89: '\u1c8a', 0xA7CB: '\u0264', 0xA7CC: '\ua7cd', 0xA7CE: '\ua7cf', 0xA7D2: '\ua7d3', 0xA7D4: '\ua7d5', 0xA7DA: '\ua7db', 0xA7DC: '\u019b', 0x10D50: '\U00010d70', 0x10D51: '\U00010d71', 0x10D52: '\U00010d72', 0x10D53: '\U00010d73', 0x10D54: '\U00010d74', 0x10D55: '\U00010d75', 0x10D56: '\U00010d76', 0x10D57: '\U00010d77', 0x10D58: '\U00010d78', 0x10D59: '\U00010d79', 0x10D5A: '\U00010d7a', 0x10D5B: '\U00010d7b', 0x10D5C: '\U00010d7c', 0x10D5D: '\U00010d7d', 0x10D5E: '\U00010d7e', 0x10D5F: '\U00010d7f', 0x10D60: '\U00010d80', 0x10D61: '\U00010d81', 0x10D62: '\U00010d82', 0x10D63: '\U00010d83', 0x10D64: '\U00010d84', 0x10D65: '\U00010d85', 0x16EA0: '\U00016ebb', 0x16EA1: '\U00016ebc', 0x16EA2: '\U00016ebd', 0x16EA3: '\U00016ebe', 0x16EA4: '\U00016ebf', 0x16EA5: '\U00016ec0', 0x16EA6: '\U00016ec1', 0x16EA7: '\U00016ec2', 0x16EA8: '\U00016ec3', 0x16EA9: '\U00016ec4', 0x16EAA: '\U00016ec5', 0x16EAB: '\U00016ec6', 0x16EAC: '\U00016ec7', 0x16EAD: '\U00016ec8', 0x16EAE: '\U00016ec9', 0x16EAF: '\U00016eca', 0x16EB0: '\U00016ecb', 0x16EB1: '\U00016ecc', 0x16EB2: '\U00016ecd', 0x16EB3: '\U00016ece', 0x16EB4: '\U00016ecf', 0x16EB5: '\U00016ed0', 0x16EB6: '\U00016ed1', 0x16EB7: '\U00016ed2', 0x16EB8: '\U00016ed3'}
_STRIP_OVERRIDES = {0x11938: '\U00011938'}


def _in_ranges(table: tuple[int, ...], cp: int) -> bool:
    return bisect_right(table, cp) & 1 == 1


def _is_cjk(cp: int) -> bool:
    for lo, hi in _CJK:
        if lo <= cp <= hi:
            return True
    return False


class LeanEncoderError(Exception):
    """The model folder cannot be read by the lean encoder (missing file, unsupported tokenizer)."""


# safetensors dtype -> (struct code, item size)
_DTYPES = {"I8": ("b", 1), "F16": ("e", 2), "F32": ("f", 4), "F64": ("d", 8), "I32": ("i", 4), "I64": ("q", 8)}


class _Tensor:
    """One tensor of a safetensors file, read row by row through a memory map (or a bytes buffer)."""

    __slots__ = ("buf", "offset", "shape", "code", "size", "row_len", "row_bytes", "_fmt")

    def __init__(self, buf, offset: int, shape: list[int], dtype: str) -> None:
        if dtype not in _DTYPES:
            raise LeanEncoderError(f"unsupported safetensors dtype {dtype}")
        self.buf = buf
        self.offset = offset
        self.shape = shape
        self.code, self.size = _DTYPES[dtype]
        self.row_len = shape[1] if len(shape) > 1 else 1
        self.row_bytes = self.row_len * self.size
        self._fmt = struct.Struct(f"<{self.row_len}{self.code}")

    def row(self, i: int) -> tuple:
        return self._fmt.unpack_from(self.buf, self.offset + i * self.row_bytes)

    def scalar(self, i: int):
        return self.row(i)[0]


# Model2Vec's folder layouts, in the order model2vec tries them: (weights, tokenizer, config, tensor name).
_LAYOUTS = (
    ("model.safetensors", "tokenizer.json", "config.json", "embeddings"),
    ("model.safetensors", "tokenizer.json", "config_sentence_transformers.json", "embedding.weight"),
    ("0_StaticEmbedding/model.safetensors", "0_StaticEmbedding/tokenizer.json", "config_sentence_transformers.json",
     "embedding.weight"),
)


def model_files(folder: str | os.PathLike) -> tuple[str, str, str, str] | None:
    """(weights file, tokenizer.json, config file, tensor name) of a Model2Vec folder, or None."""
    base = os.fspath(folder)
    for names in _LAYOUTS:
        paths = [os.path.join(base, n) for n in names[:3]]
        if all(os.path.isfile(p) for p in paths):
            return paths[0], paths[1], paths[2], names[3]
    return None


def _open_safetensors(path: str) -> tuple[dict, object]:
    with open(path, "rb") as fh:
        try:
            buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # empty file, or a filesystem without mmap
            buf = fh.read()
    (n,) = struct.unpack_from("<Q", buf, 0)
    header = json.loads(bytes(buf[8 : 8 + n]))
    return header, (buf, 8 + n)


def open_tensors(weights_path, tensor_name: str = "embeddings"):
    """(the rows tensor, a lookup of the file's other tensors by name: a `_Tensor` or None) of a
    static model's safetensors file; `tensor_name` falls back to "embeddings"."""
    header, (buf, base) = _open_safetensors(os.fspath(weights_path))
    name = tensor_name if tensor_name in header else "embeddings"
    if name not in header:
        raise LeanEncoderError(f"{weights_path} has no {tensor_name!r} tensor")

    def tensor(key: str) -> _Tensor | None:
        info = header.get(key)
        if info is None:
            return None
        return _Tensor(buf, base + info["data_offsets"][0], info["shape"], info["dtype"])

    return tensor(name), tensor


def mean_pool(ids, dim: int, rows, weights=None, mapping=None, *, normalize: bool = True) -> list[float]:
    """model2vec's pooling of token ids: the mean of their (weighted, mapped) rows, then unit length
    (NORM_EPSILON added to the norm); all zeros without ids. Shared by the WordPiece and Unigram
    encoders."""
    if not ids:
        return [0.0] * dim
    if mapping is None and weights is None:
        acc = list(map(sum, zip(*[rows.row(i) for i in ids])))
    else:
        picked = []
        for i in ids:
            row = rows.row(mapping.scalar(i) if mapping is not None else i)
            if weights is not None:
                w = weights.scalar(i)
                row = [x * w for x in row]
            picked.append(row)
        acc = list(map(sum, zip(*picked)))
    n = len(ids)
    vec = [a / n for a in acc]
    if not normalize:
        return vec
    norm = sum(x * x for x in vec) ** 0.5 + NORM_EPSILON
    return [x / norm for x in vec]


class LeanEncoder:
    """Encode one text at a time, like ``StaticModel.encode([text])[0]`` normalised, in pure Python."""

    def __init__(
        self,
        *,
        vocab: dict[str, int],
        rows: _Tensor,
        tokenizer_config: dict,
        unk_id: int | None,
        max_length: int | None,
        weights: _Tensor | None = None,
        mapping: _Tensor | None = None,
        median_token_length: int | None = None,
        max_token_chars: int | None = None,
    ) -> None:
        self.vocab = vocab
        self._rows = rows
        self._weights = weights
        self._mapping = mapping
        self.dim = rows.row_len
        self.unk_id = unk_id
        self.max_length = max_length
        self._median = median_token_length
        self._max_token_chars = max_token_chars
        norm = tokenizer_config.get("normalizer") or {}
        pre = tokenizer_config.get("pre_tokenizer") or {}
        model = tokenizer_config.get("model") or {}
        if model.get("type", "WordPiece") != "WordPiece":
            raise LeanEncoderError(f"lean encoder supports WordPiece tokenizers, not {model.get('type')}")
        if norm and norm.get("type") != "BertNormalizer":
            raise LeanEncoderError(f"lean encoder supports the BertNormalizer, not {norm.get('type')}")
        if pre and pre.get("type") != "BertPreTokenizer":
            raise LeanEncoderError(f"lean encoder supports the BertPreTokenizer, not {pre.get('type')}")
        self._has_normalizer = bool(norm)
        self._clean = bool(norm.get("clean_text", True))
        self._chinese = bool(norm.get("handle_chinese_chars", True))
        self._lower = bool(norm.get("lowercase", True))
        strip = norm.get("strip_accents")
        self._strip = self._lower if strip is None else bool(strip)
        self._prefix = model.get("continuing_subword_prefix", "##")
        self._max_word = int(model.get("max_input_chars_per_word", 100))
        raw, normed = [], []
        for tok in tokenizer_config.get("added_tokens") or []:
            (normed if tok.get("normalized") else raw).append((tok["content"], tok["id"]))
        # leftmost-longest matching, as tokenizers' aho-corasick does
        self._added_raw = sorted(raw, key=lambda t: -len(t[0]))
        self._added_norm = sorted(normed, key=lambda t: -len(t[0]))

    # ---------------------------------------------------------------- loading
    @classmethod
    def from_folder(cls, path: str | os.PathLike) -> "LeanEncoder":
        """Load a Model2Vec folder (model.safetensors + tokenizer.json + config.json)."""
        files = model_files(path)
        if files is None:
            raise LeanEncoderError(
                f"no Model2Vec model in {os.fspath(path)}: expected model.safetensors, tokenizer.json and config.json"
            )
        wp, tp, cp, tensor_name = files
        with open(tp, encoding="utf-8") as fh:
            tok = json.load(fh)
        with open(cp, encoding="utf-8") as fh:
            config = json.load(fh)
        if (tok.get("model") or {}).get("type") == "Unigram":  # the multilingual model: vaultrag.lean_unigram
            from .lean_unigram import LeanUnigram

            return LeanUnigram.from_parts(tok, config, wp, tensor_name)
        return cls.from_tables(tokenizer_config=tok, config=config, weights_path=wp, tensor_name=tensor_name)

    @classmethod
    def from_tables(
        cls,
        *,
        tokenizer_config: dict,
        config: dict,
        weights_path: str | os.PathLike,
        tensor_name: str = "embeddings",
        vocab=None,
        median_token_length: int | None = None,
        max_token_chars: int | None = None,
    ) -> "LeanEncoder":
        """Build from already-parsed parts (see ``export_tables``), e.g. stored in the index database.

        ``tokenizer_config`` needs only the keys ``normalizer``, ``pre_tokenizer``, ``added_tokens`` and
        ``model`` (whose ``vocab`` may be left out when ``vocab`` is passed). ``vocab`` may be a dict or any
        object with ``get(token) -> id | None`` (e.g. one that looks tokens up in SQLite one at a time,
        which costs far less per query than loading 30k entries); pass ``median_token_length`` and
        ``max_token_chars`` with such an object, since they would otherwise be computed by iterating it.
        """
        rows, tensor = open_tensors(weights_path, tensor_name)
        model = tokenizer_config.get("model") or {}
        if vocab is None:
            vocab = dict(model.get("vocab") or {})
            for tok in tokenizer_config.get("added_tokens") or []:
                vocab.setdefault(tok["content"], tok["id"])
        unk_token = model.get("unk_token")
        unk_id = vocab.get(unk_token) if unk_token is not None else None
        max_length = config.get("max_length", DEFAULT_MAX_LENGTH)
        return cls(
            vocab=vocab, rows=rows, tokenizer_config=tokenizer_config, unk_id=unk_id, max_length=max_length,
            weights=tensor("weights"), mapping=tensor("mapping"), median_token_length=median_token_length,
            max_token_chars=max_token_chars,
        )

    def export_tables(self) -> dict:
        """Plain-data parts (marshal/JSON-able) to rebuild this encoder with ``from_tables`` faster than
        parsing tokenizer.json: the vocabulary, the tokenizer settings without the vocabulary, the
        median token length and max_length. The rows stay in model.safetensors."""
        tok_cfg = {
            "normalizer": None if not self._has_normalizer else {
                "type": "BertNormalizer", "clean_text": self._clean, "handle_chinese_chars": self._chinese,
                "strip_accents": self._strip, "lowercase": self._lower},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "added_tokens": [{"content": c, "id": i, "normalized": False} for c, i in self._added_raw]
            + [{"content": c, "id": i, "normalized": True} for c, i in self._added_norm],
            "model": {"type": "WordPiece", "unk_token": self._unk_token(),
                      "continuing_subword_prefix": self._prefix, "max_input_chars_per_word": self._max_word},
        }
        return {"vocab": dict(self.vocab), "tokenizer_config": tok_cfg, "max_length": self.max_length,
                "median_token_length": self.median_token_length, "max_token_chars": self.max_token_chars}

    def vocab_rows(self):
        """Yield ``(token, id, row)`` for every vocabulary entry, rows as float tuples (mapping applied,
        weights not), for storing the model in a database."""
        for token, i in sorted(self.vocab.items(), key=lambda kv: kv[1]):
            j = self._mapping.scalar(i) if self._mapping is not None else i
            yield token, i, self._rows.row(j)

    def _unk_token(self) -> str | None:
        if self.unk_id is None:
            return None
        for token, i in self.vocab.items():
            if i == self.unk_id:
                return token
        return None

    @property
    def max_token_chars(self) -> int:
        """The longest vocabulary entry in characters: no WordPiece candidate longer than it is tried."""
        if self._max_token_chars is None:
            self._max_token_chars = max(map(len, self.vocab), default=0)
        return self._max_token_chars

    @property
    def median_token_length(self) -> int:
        """``int(np.median(len(token) for token in vocabulary))``, as model2vec computes it."""
        if self._median is None:
            counts: dict[int, int] = {}
            for token in self.vocab:
                n = len(token)
                counts[n] = counts.get(n, 0) + 1
            total = len(self.vocab)
            lo_idx, hi_idx = (total - 1) // 2, total // 2
            seen, lo, hi = 0, None, None
            for n in sorted(counts):
                seen += counts[n]
                if lo is None and seen > lo_idx:
                    lo = n
                if seen > hi_idx:
                    hi = n
                    break
            self._median = int((lo + hi) / 2)
        return self._median

    # ---------------------------------------------------------------- tokenizer
    def _normalize(self, text: str) -> str:
        if not self._has_normalizer:
            return text
        if text.isascii():
            if self._clean:
                if not text.isprintable():
                    text = "".join(
                        " " if ch in "\t\n\r" else ch for ch in text if " " <= ch < "\x7f" or ch in "\t\n\r"
                    )
            return text.lower() if self._lower else text
        out = []
        for ch in text:
            cp = ord(ch)
            if self._clean:
                if ch in _CLEAN_TO_SPACE:
                    out.append(" ")
                    continue
                if _in_ranges(_CONTROL, cp):
                    continue
            if self._chinese and _is_cjk(cp):
                out.append(" ")
                out.append(ch)
                out.append(" ")
            else:
                out.append(ch)
        text = "".join(out)
        if self._strip:
            if any(ord(ch) in _STRIP_OVERRIDES for ch in text):
                parts = []
                for ch in text:
                    o = _STRIP_OVERRIDES.get(ord(ch))
                    parts.append(o if o is not None else unicodedata.normalize("NFD", ch))
                text = "".join(parts)
            else:
                text = unicodedata.normalize("NFD", text)
            text = "".join(ch for ch in text if not _in_ranges(_NONSPACING_MARK, ord(ch)))
        if self._lower:
            lowered = []
            for ch in text:
                o = _LOWER_OVERRIDES.get(ord(ch))
                lowered.append(o if o is not None else ch.lower())
            text = "".join(lowered)
        return text

    @staticmethod
    def _pre_tokenize(text: str) -> list[str]:
        words: list[str] = []
        if text.isascii():
            if text.isalnum():
                return [text]
            start = None
            for i, ch in enumerate(text):
                if ch in _ASCII_PUNCT:
                    if start is not None:
                        words.append(text[start:i])
                        start = None
                    words.append(ch)
                elif ch in " \t\n\r\x0b\x0c":
                    if start is not None:
                        words.append(text[start:i])
                        start = None
                elif start is None:
                    start = i
            if start is not None:
                words.append(text[start:])
            return words
        start = None
        for i, ch in enumerate(text):
            if ch in _WHITESPACE:
                if start is not None:
                    words.append(text[start:i])
                    start = None
            elif ch in _ASCII_PUNCT or _in_ranges(_PUNCTUATION, ord(ch)):
                if start is not None:
                    words.append(text[start:i])
                    start = None
                words.append(ch)
            elif start is None:
                start = i
        if start is not None:
            words.append(text[start:])
        return words

    def _wordpiece(self, word: str, out: list[int]) -> None:
        vocab = self.vocab
        i = vocab.get(word)
        if i is not None and len(word) <= self._max_word:
            out.append(i)
            return
        n = len(word)
        if n > self._max_word:
            if self.unk_id is not None:
                out.append(self.unk_id)
            return
        limit = self.max_token_chars
        prefix = self._prefix
        pieces: list[int] = []
        start = 0
        while start < n:
            end = min(n, start + limit)
            found = None
            while start < end:
                sub = word[start:end] if start == 0 else prefix + word[start:end]
                found = vocab.get(sub)
                if found is not None:
                    break
                end -= 1
            if found is None:
                if self.unk_id is not None:
                    out.append(self.unk_id)
                return
            pieces.append(found)
            start = end
        out.extend(pieces)

    def _split_added(self, text: str, added: list[tuple[str, int]]) -> list[tuple[str, int | None]]:
        """Split on added tokens, leftmost-longest: [(segment, None) | (token, id)]."""
        if not added:
            return [(text, None)]
        parts: list[tuple[str, int | None]] = []
        pos = 0
        while True:
            best = None
            for content, tid in added:
                if not content:
                    continue
                j = text.find(content, pos)
                if j >= 0 and (best is None or j < best[0] or (j == best[0] and len(content) > len(best[1]))):
                    best = (j, content, tid)
            if best is None:
                break
            j, content, tid = best
            if j > pos:
                parts.append((text[pos:j], None))
            parts.append((content, tid))
            pos = j + len(content)
        if pos < len(text):
            parts.append((text[pos:], None))
        return parts

    def tokenize(self, text: str) -> list[int]:
        """Token ids as ``StaticModel.encode`` uses them: both truncations applied, unknown ids dropped."""
        max_length = self.max_length
        if max_length is not None and len(text) > max_length:
            text = text[: max_length * self.median_token_length]
        ids: list[int] = []
        for segment, tid in self._split_added(text, self._added_raw):
            if tid is not None:
                ids.append(tid)
                continue
            normed = self._normalize(segment)
            for seg2, tid2 in self._split_added(normed, self._added_norm):
                if tid2 is not None:
                    ids.append(tid2)
                    continue
                for word in self._pre_tokenize(seg2):
                    self._wordpiece(word, ids)
            if max_length is not None and len(ids) >= max_length:
                break
        if max_length is not None:
            del ids[max_length:]
        if self.unk_id is not None:
            ids = [i for i in ids if i != self.unk_id]
        return ids

    def known_share(self, words: list[str]) -> float:
        """Share of `words` the vocabulary holds whole (one token, not pieces or unknown).

        A static model represents a word it knows whole; a word shredded into pieces (most
        non-English text for an English vocabulary) or a CJK character run barely. The retriever
        weights vectors by this share.
        """
        if not words:
            return 0.0
        known = 0
        for word in words:
            if any(_is_cjk(ord(ch)) for ch in word):
                continue
            ids: list[int] = []
            for piece in self._pre_tokenize(self._normalize(word)):
                self._wordpiece(piece, ids)
            known += len(ids) == 1 and ids[0] != self.unk_id
        return known / len(words)

    # ---------------------------------------------------------------- encoding
    def encode(self, text: str, *, normalize: bool = True) -> list[float]:
        """The embedding of ``text`` as ``dim`` floats: unit length, or all zeros without known tokens."""
        return mean_pool(self.tokenize(text), self.dim, self._rows, self._weights, self._mapping,
                         normalize=normalize)

    def __repr__(self) -> str:
        return f"LeanEncoder(dim={self.dim}, max_length={self.max_length})"
