"""Dequantizing GGUF block types to float32 (numpy, vectorized).

Each function takes ``blocks`` as a ``(n, block_bytes)`` uint8 array and returns ``(n, block_elements)``
float32, following ggml's ``dequantize_row_*`` (``ggml-quants.c``); the layouts are ggml's ``block_*``
structs. The tests check them against gguf-py's dequantizers (and Q8_K, which gguf-py lacks, against a direct
reading of ``block_q8_K``).
"""

from __future__ import annotations

from typing import Callable, Dict

import numpy as np

QK_K = 256


def _f16(b: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(b).view("<f2").astype(np.float32)


def _q8_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, :2])
    return np.ascontiguousarray(blocks[:, 2:]).view(np.int8).astype(np.float32) * d


def _q4_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, :2])
    qs = blocks[:, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - np.int8(8)
    return q.astype(np.float32) * d


def _q2_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    scales, qs = blocks[:, :16], blocks[:, 16:80]
    d, dmin = _f16(blocks[:, 80:82]), _f16(blocks[:, 82:84])
    dl = (d * (scales & 0xF).astype(np.float32)).reshape(n, 16, 1)
    ml = (dmin * (scales >> 4).astype(np.float32)).reshape(n, 16, 1)
    shift = np.array([0, 2, 4, 6], dtype=np.uint8).reshape(1, 1, 4, 1)
    q = ((qs.reshape(n, 2, 1, 32) >> shift) & 3).reshape(n, 16, 16).astype(np.float32)
    return (dl * q - ml).reshape(n, QK_K)


def _q3_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    hmask, qs, scales = blocks[:, :32], blocks[:, 32:96], blocks[:, 96:108]
    d = _f16(blocks[:, 108:110])
    low = (scales[:, :8].reshape(n, 1, 8) >> np.array([0, 4], dtype=np.uint8).reshape(1, 2, 1)).reshape(n, 16)
    high = (scales[:, 8:].reshape(n, 1, 4) >> np.array([0, 2, 4, 6], dtype=np.uint8).reshape(1, 4, 1)).reshape(n, 16)
    sc = ((low & 0x0F) | ((high & 0x03) << 4)).astype(np.int8) - np.int8(32)
    dl = (d * sc.astype(np.float32)).reshape(n, 16, 1)
    ql = (qs.reshape(n, 2, 1, 32) >> np.array([0, 2, 4, 6], dtype=np.uint8).reshape(1, 1, 4, 1)).reshape(n, 16, 16) & 3
    qh = (hmask.reshape(n, 1, 1, 32) >> np.arange(8, dtype=np.uint8).reshape(1, 1, 8, 1)).reshape(n, 16, 16) & 1
    q = ql.astype(np.int8) - ((qh ^ 1) << 2).astype(np.int8)  # a clear high bit subtracts 4
    return (dl * q.astype(np.float32)).reshape(n, QK_K)


def _scale_min_k4(scales: np.ndarray):
    """The eight 6-bit scales and mins of Q4_K and Q5_K (ggml's ``get_scale_min_k4``)."""
    n = scales.shape[0]
    s = scales.reshape(n, 3, 4)
    d, m, md = s[:, 0], s[:, 1], s[:, 2]
    sc = np.concatenate([d & 0x3F, (md & 0x0F) | ((d >> 2) & 0x30)], axis=1)
    mn = np.concatenate([m & 0x3F, (md >> 4) | ((m >> 2) & 0x30)], axis=1)
    return sc.astype(np.float32), mn.astype(np.float32)


def _q4_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    d, dmin = _f16(blocks[:, :2]), _f16(blocks[:, 2:4])
    sc, mn = _scale_min_k4(blocks[:, 4:16])
    qs = blocks[:, 16:]
    q = ((qs.reshape(n, 4, 1, 32) >> np.array([0, 4], dtype=np.uint8).reshape(1, 1, 2, 1)) & 0x0F).reshape(n, 8, 32)
    return ((d * sc).reshape(n, 8, 1) * q.astype(np.float32) - (dmin * mn).reshape(n, 8, 1)).reshape(n, QK_K)


def _q5_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    d, dmin = _f16(blocks[:, :2]), _f16(blocks[:, 2:4])
    sc, mn = _scale_min_k4(blocks[:, 4:16])
    qh, qs = blocks[:, 16:48], blocks[:, 48:]
    ql = ((qs.reshape(n, 4, 1, 32) >> np.array([0, 4], dtype=np.uint8).reshape(1, 1, 2, 1)) & 0x0F).reshape(n, 8, 32)
    hi = ((qh.reshape(n, 1, 1, 32) >> np.arange(8, dtype=np.uint8).reshape(1, 1, 8, 1)) & 1).reshape(n, 8, 32)
    q = (ql | (hi << 4)).astype(np.float32)
    return ((d * sc).reshape(n, 8, 1) * q - (dmin * mn).reshape(n, 8, 1)).reshape(n, QK_K)


def _q6_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    ql, qh = blocks[:, :128], blocks[:, 128:192]
    sc = np.ascontiguousarray(blocks[:, 192:208]).view(np.int8).astype(np.float32)
    d = _f16(blocks[:, 208:210])
    low = ((ql.reshape(n, 2, 1, 64) >> np.array([0, 4], dtype=np.uint8).reshape(1, 1, 2, 1)) & 0x0F).reshape(n, 8, 32)
    high = ((qh.reshape(n, 2, 1, 32) >> np.array([0, 2, 4, 6], dtype=np.uint8).reshape(1, 1, 4, 1)) & 3).reshape(n, 8, 32)
    q = ((low | (high << 4)).astype(np.int8) - np.int8(32)).reshape(n, 16, 16).astype(np.float32)
    return ((d * sc).reshape(n, 16, 1) * q).reshape(n, QK_K)


def _q8_k(blocks: np.ndarray) -> np.ndarray:
    d = np.ascontiguousarray(blocks[:, :4]).view("<f4").astype(np.float32)
    return np.ascontiguousarray(blocks[:, 4:260]).view(np.int8).astype(np.float32) * d


#: dtype name -> (block elements, block bytes, dequantizer)
DEQUANTIZERS: Dict[str, "tuple[int, int, Callable[[np.ndarray], np.ndarray]]"] = {
    "Q8_0": (32, 34, _q8_0),
    "Q4_0": (32, 18, _q4_0),
    "Q2_K": (QK_K, 84, _q2_k),
    "Q3_K": (QK_K, 110, _q3_k),
    "Q4_K": (QK_K, 144, _q4_k),
    "Q5_K": (QK_K, 176, _q5_k),
    "Q6_K": (QK_K, 210, _q6_k),
    "Q8_K": (QK_K, 292, _q8_k),
}


def dequantize(array: np.ndarray, dtype: str) -> np.ndarray:
    elems, block_bytes, fn = DEQUANTIZERS[dtype]
    data = np.asarray(array)
    if data.dtype != np.uint8 or data.ndim == 0 or data.shape[-1] % block_bytes:
        raise ValueError(f"{dtype} data must be uint8 rows of whole {block_bytes}-byte blocks")
    rows = data.shape[:-1]
    blocks = data.reshape(-1, block_bytes)
    with np.errstate(invalid="ignore", over="ignore"):
        out = fn(blocks)
    return out.reshape(rows + (data.shape[-1] // block_bytes * elems,))
