//! The demo model (`cli/demo/tiny-mlp`): a 4 → 8 → 3 perceptron, ReLU, f32 first layer, int8 second layer
//! with one f32 scale. Its weights are read through tpack's zero-copy little-endian views, straight from
//! wherever the container lies (flash on the device, a file on the host), at any alignment and on any host.
//!
//! One implementation serves the firmware (`embedded/firmware`) and the host test that holds the expected
//! outputs (`tests/expected.rs`), so "the device computes what the host computes" is a comparison of the
//! same arithmetic, in the same order, on two machines.
#![no_std]
#![forbid(unsafe_code)]

pub mod expected;

use tpack::zerocopy::little_endian::F32;
use tpack::{Container, Dtype, Entry, MetaValue};

/// The container the firmware runs: `tpack pack cli/demo/tiny-mlp/manifest.json -o embedded/tiny-mlp/tiny-mlp.tpack`
/// (a test checks it is current).
pub const CONTAINER_PATH: &str = "embedded/tiny-mlp/tiny-mlp.tpack";

/// Most inputs, hidden units and outputs the fixed-size buffers hold.
pub const MAX_WIDTH: usize = 32;

/// Why a container does not hold a usable model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// A metadata key is missing or has the wrong type.
    Metadata(&'static str),
    /// An entry is missing.
    MissingEntry(&'static str),
    /// An entry's dtype or shape does not fit `model.layers`.
    BadEntry(&'static str),
    /// `model.layers` asks for more than [`MAX_WIDTH`] units in a layer.
    TooWide,
}

/// The model's weights, borrowed from the container.
#[derive(Clone, Copy, Debug)]
pub struct Model<'a> {
    /// Inputs, hidden units, outputs (from `model.layers`).
    pub widths: [usize; 3],
    fc1_weight: &'a [F32],
    fc1_bias: &'a [F32],
    fc2_weight: &'a [i8],
    fc2_scale: f32,
    fc2_bias: &'a [F32],
}

fn entry<'a>(
    c: &Container<'a>,
    name: &'static str,
    dtype: Dtype,
    dims: &[u64],
) -> Result<Entry<'a>, ModelError> {
    let e = c.get(name).ok_or(ModelError::MissingEntry(name))?;
    if e.dtype() != dtype || e.shape().dims() != dims {
        return Err(ModelError::BadEntry(name));
    }
    Ok(e)
}

impl<'a> Model<'a> {
    /// Reads the layer sizes from the typed metadata `model.layers` (u64[]) and views the weights in place.
    ///
    /// # Errors
    /// [`ModelError`] naming the missing or mismatched key or entry.
    pub fn from_container(c: &Container<'a>) -> Result<Self, ModelError> {
        let Some(MetaValue::U64Array(layers)) = c.metadata().get("model.layers") else {
            return Err(ModelError::Metadata("model.layers"));
        };
        let [i, h, o] = match layers {
            [i, h, o] => [i.get(), h.get(), o.get()],
            _ => return Err(ModelError::Metadata("model.layers")),
        };
        let widths = [i, h, o].map(|w| usize::try_from(w).unwrap_or(usize::MAX));
        if widths.iter().any(|&w| w == 0 || w > MAX_WIDTH) {
            return Err(ModelError::TooWide);
        }
        let f32s = |e: Entry<'a>, name| e.le::<F32>().ok_or(ModelError::BadEntry(name));
        let fc1_weight = f32s(entry(c, "fc1.weight", Dtype::F32, &[h, i])?, "fc1.weight")?;
        let fc1_bias = f32s(entry(c, "fc1.bias", Dtype::F32, &[h])?, "fc1.bias")?;
        let fc2_weight = entry(c, "fc2.weight", Dtype::I8, &[o, h])?
            .le::<i8>()
            .ok_or(ModelError::BadEntry("fc2.weight"))?;
        let scale = f32s(entry(c, "fc2.scale", Dtype::F32, &[])?, "fc2.scale")?;
        let fc2_scale = scale.first().map(|s| s.get()).ok_or(ModelError::BadEntry("fc2.scale"))?;
        let fc2_bias = f32s(entry(c, "fc2.bias", Dtype::F32, &[o])?, "fc2.bias")?;
        Ok(Self { widths, fc1_weight, fc1_bias, fc2_weight, fc2_scale, fc2_bias })
    }

    /// Runs the model on `input` (`widths[0]` values) and writes `widths[2]` logits to `logits`; returns the
    /// predicted class (the first largest logit). Every sum runs in index order, in f32.
    ///
    /// # Panics
    /// Never for a model from [`Model::from_container`]: every slice was checked against `widths`; short
    /// `input` or `logits` slices are read and written only as far as they go.
    pub fn infer(&self, input: &[f32], logits: &mut [f32]) -> usize {
        let [n_in, n_hidden, _] = self.widths;
        let mut hidden = [0f32; MAX_WIDTH];
        for (j, h) in hidden.iter_mut().enumerate().take(n_hidden) {
            let row = self.fc1_weight.iter().skip(j * n_in).take(n_in);
            let mut acc = self.fc1_bias.get(j).map_or(0.0, |b| b.get());
            for (w, x) in row.zip(input) {
                acc += w.get() * x;
            }
            *h = if acc > 0.0 { acc } else { 0.0 };
        }
        let mut best: Option<(usize, f32)> = None;
        for (i, out) in logits.iter_mut().enumerate().take(self.widths[2]) {
            let row = self.fc2_weight.iter().skip(i * n_hidden).take(n_hidden);
            let mut acc = 0f32;
            for (q, h) in row.zip(&hidden) {
                acc += f32::from(*q) * h;
            }
            *out = acc * self.fc2_scale + self.fc2_bias.get(i).map_or(0.0, |b| b.get());
            if best.is_none_or(|(_, top)| *out > top) {
                best = Some((i, *out));
            }
        }
        best.map_or(0, |(i, _)| i)
    }
}

/// The held-out test inputs stored in the container (`test.inputs`, F32 `[n, widths[0]]`).
///
/// # Errors
/// [`ModelError::BadEntry`] if they are missing or mis-shaped.
pub fn test_inputs<'a>(c: &Container<'a>, width: usize) -> Result<&'a [F32], ModelError> {
    let e = c.get("test.inputs").ok_or(ModelError::MissingEntry("test.inputs"))?;
    match e.shape().dims() {
        [_, w] if usize::try_from(*w) == Ok(width) => {
            e.le::<F32>().ok_or(ModelError::BadEntry("test.inputs"))
        }
        _ => Err(ModelError::BadEntry("test.inputs")),
    }
}
