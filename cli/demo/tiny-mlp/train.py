#!/usr/bin/env python3
"""Trains the bundled demo model and writes its pack manifest: `python3 train.py` (needs numpy).

The model is a real, if tiny, classifier: a 4 → 8 → 3 multilayer perceptron (ReLU) trained by full-batch
gradient descent on a synthetic, Iris-like data set of three Gaussian clusters (seeded, so the run is
reproducible). The first layer stays f32; the second is quantized to int8 with one f32 scale, the way small
models are shipped to microcontrollers. Six held-out inputs and their true classes go into the container too,
so a device can run the model on them.

Outputs (in this directory): fc1.weight.bin (the one payload kept as a file, to show `file` entries) and
manifest.json, from which `tpack pack manifest.json -o tiny-mlp.tpack` builds the container.

Inference, which the firmware (embedded/firmware) and the host reference (embedded/tiny-mlp) both implement:
    h[j]      = max(0, fc1.bias[j] + sum_k fc1.weight[j][k] * x[k])          (f32, k ascending)
    acc[i]    = sum_j float(fc2.weight[i][j]) * h[j]                           (f32, j ascending)
    logit[i]  = acc[i] * fc2.scale + fc2.bias[i]
"""

import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = ["setosa", "versicolor", "virginica"]
CENTERS = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])
SPREAD = np.array([0.35, 0.35, 0.3, 0.15])


def dataset(rng, per_class):
    xs = np.concatenate([c + rng.normal(size=(per_class, 4)) * SPREAD for c in CENTERS])
    ys = np.repeat(np.arange(3), per_class)
    return xs.astype(np.float32), ys


def main():
    rng = np.random.default_rng(20261129)
    x, y = dataset(rng, 60)
    mean, std = x.mean(axis=0), x.std(axis=0)
    xn = (x - mean) / std
    w1 = rng.normal(size=(8, 4)) * 0.5
    b1 = np.zeros(8)
    w2 = rng.normal(size=(3, 8)) * 0.5
    b2 = np.zeros(3)
    onehot = np.eye(3)[y]
    for _ in range(3000):
        h = np.maximum(0, xn @ w1.T + b1)
        logits = h @ w2.T + b2
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / len(x)
        gw2, gb2 = g.T @ h, g.sum(axis=0)
        gh = (g @ w2) * (h > 0)
        gw1, gb1 = gh.T @ xn, gh.sum(axis=0)
        for param, grad in ((w1, gw1), (b1, gb1), (w2, gw2), (b2, gb2)):
            param -= 0.5 * grad
    # Fold the input normalisation into the first layer, so the device feeds raw measurements.
    w1f = (w1 / std).astype(np.float32)
    b1f = (b1 - (w1 / std) @ mean).astype(np.float32)
    scale = float(np.abs(w2).max() / 127.0)
    q2 = np.clip(np.round(w2 / scale), -127, 127).astype(np.int8)
    scale = float(np.float32(scale))

    test_x, test_y = dataset(np.random.default_rng(7), 2)
    pred = np.argmax(np.maximum(0, test_x @ w1f.T + b1f) @ (q2.astype(np.float32) * scale).T + b2, axis=1)
    train_pred = np.argmax(np.maximum(0, x @ w1f.T + b1f) @ (q2.astype(np.float32) * scale).T + b2, axis=1)
    print(f"training accuracy {np.mean(train_pred == y):.3f}; held-out predictions {pred.tolist()} vs {test_y.tolist()}")

    with open(os.path.join(HERE, "fc1.weight.bin"), "wb") as f:
        f.write(struct.pack("<32f", *w1f.flatten().tolist()))
    f32 = lambda a: [float(np.float32(v)) for v in np.asarray(a).flatten()]
    manifest = {
        "tpack_manifest": 1,
        "address_bits": 32,
        "entries": [
            {"name": "fc1.weight", "dtype": "F32", "shape": [8, 4], "file": "fc1.weight.bin"},
            {"name": "fc1.bias", "dtype": "F32", "shape": [8], "data": f32(b1f)},
            {"name": "fc2.weight", "dtype": "I8", "shape": [3, 8], "data": q2.flatten().tolist()},
            {"name": "fc2.scale", "dtype": "F32", "shape": [], "data": [scale]},
            {"name": "fc2.bias", "dtype": "F32", "shape": [3], "data": f32(b2)},
            {"name": "test.inputs", "dtype": "F32", "shape": [6, 4], "data": f32(test_x)},
            # Thumb code for `movs r0, #42; bx lr`: a loader copies it to its load address and calls it.
            {"name": "boot.code", "dtype": "RAW", "alignment": 4, "target": "0x20300000", "hex": "2a207047"},
        ],
        "metadata": [
            {"key": "model.name", "type": "string", "value": "tiny-mlp"},
            {"key": "model.layers", "type": "u64[]", "value": [4, 8, 3]},
            {"key": "model.activation", "type": "string", "value": "relu"},
            {"key": "model.labels", "type": "string[]", "value": LABELS},
            {"key": "test.labels", "type": "u64[]", "value": test_y.tolist()},
        ],
    }
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
