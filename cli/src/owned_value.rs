//! [`OwnedValue`]: a metadata value the tool owns (read from a manifest or a foreign file), and the writer's
//! borrowed view of it ([`OwnedValue::with_value`]).
//!
//! The view of an `array[]` is the one part that takes care: [`ArrayArray::new`] borrows a slice of the
//! items' views, which borrow their little-endian elements, so every view must be built before the one that
//! holds it. The items are laid out level by level (each level's arrays of arrays have their items
//! contiguous in the next level), and the views are built from the deepest level up, one stack frame per
//! level. Rejected: one stack frame per item, which a hostile file with a million empty arrays would
//! overflow; nesting is bounded (8 levels in tpack, 4 in GGUF), item counts are not.

use tpack::zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use tpack::{ArrayArray, MetaValue, StringArray};

/// A metadata value owned by the tool: one variant per type of spec §7.1.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum OwnedValue {
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    String(String),
    Bytes(Vec<u8>),
    U64Array(Vec<u64>),
    I64Array(Vec<i64>),
    F64Array(Vec<f64>),
    StringArray(Vec<String>),
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    /// Any bit pattern, kept exactly.
    F32(f32),
    U8Array(Vec<u8>),
    I8Array(Vec<i8>),
    U16Array(Vec<u16>),
    I16Array(Vec<i16>),
    U32Array(Vec<u32>),
    I32Array(Vec<i32>),
    F32Array(Vec<f32>),
    BoolArray(Vec<bool>),
    /// Arrays, each of its own array type (a writer refuses an item that is not an array).
    ArrayArray(Vec<OwnedValue>),
}

impl OwnedValue {
    /// Calls `f` with the writer's view of this value.
    pub fn with_value<R>(&self, f: impl FnOnce(MetaValue<'_>) -> R) -> R {
        match self {
            OwnedValue::ArrayArray(items) => with_array_array(items, f),
            other => f(Elements::of(other).view(other)),
        }
    }
}

/// The little-endian elements of a numeric array, or the string slices of a `string[]`, that its view
/// borrows; nothing for the other types, whose view borrows the value itself.
enum Elements<'a> {
    None,
    U64(Vec<U64>),
    I64(Vec<I64>),
    F64(Vec<F64>),
    Strings(Vec<&'a str>),
    U16(Vec<U16>),
    I16(Vec<I16>),
    U32(Vec<U32>),
    I32(Vec<I32>),
    F32(Vec<F32>),
}

impl<'a> Elements<'a> {
    fn of(v: &'a OwnedValue) -> Self {
        match v {
            OwnedValue::U64Array(a) => Elements::U64(a.iter().map(|&x| U64::new(x)).collect()),
            OwnedValue::I64Array(a) => Elements::I64(a.iter().map(|&x| I64::new(x)).collect()),
            OwnedValue::F64Array(a) => Elements::F64(a.iter().map(|&x| F64::new(x)).collect()),
            OwnedValue::StringArray(a) => Elements::Strings(a.iter().map(String::as_str).collect()),
            OwnedValue::U16Array(a) => Elements::U16(a.iter().map(|&x| U16::new(x)).collect()),
            OwnedValue::I16Array(a) => Elements::I16(a.iter().map(|&x| I16::new(x)).collect()),
            OwnedValue::U32Array(a) => Elements::U32(a.iter().map(|&x| U32::new(x)).collect()),
            OwnedValue::I32Array(a) => Elements::I32(a.iter().map(|&x| I32::new(x)).collect()),
            // Bit patterns, not values: `F32::new` of a signalling NaN keeps it (no float arithmetic).
            OwnedValue::F32Array(a) => Elements::F32(a.iter().map(|&x| F32::new(x)).collect()),
            _ => Elements::None,
        }
    }

    /// The view of `v`, whose elements these are. An `array[]` has no view here (see [`with_array_array`]);
    /// it is given as empty, which never happens through [`OwnedValue::with_value`].
    fn view<'s>(&'s self, v: &'s OwnedValue) -> MetaValue<'s> {
        match (v, self) {
            (OwnedValue::U64(x), _) => MetaValue::U64(*x),
            (OwnedValue::I64(x), _) => MetaValue::I64(*x),
            (OwnedValue::F64(x), _) => MetaValue::F64(*x),
            (OwnedValue::Bool(x), _) => MetaValue::Bool(*x),
            (OwnedValue::String(s), _) => MetaValue::String(s),
            (OwnedValue::Bytes(b), _) => MetaValue::Bytes(b),
            (OwnedValue::U8(x), _) => MetaValue::U8(*x),
            (OwnedValue::I8(x), _) => MetaValue::I8(*x),
            (OwnedValue::U16(x), _) => MetaValue::U16(*x),
            (OwnedValue::I16(x), _) => MetaValue::I16(*x),
            (OwnedValue::U32(x), _) => MetaValue::U32(*x),
            (OwnedValue::I32(x), _) => MetaValue::I32(*x),
            (OwnedValue::F32(x), _) => MetaValue::F32(*x),
            (OwnedValue::U8Array(a), _) => MetaValue::U8Array(a),
            (OwnedValue::I8Array(a), _) => MetaValue::I8Array(a),
            (OwnedValue::BoolArray(a), _) => MetaValue::BoolArray(a),
            (_, Elements::U64(a)) => MetaValue::U64Array(a),
            (_, Elements::I64(a)) => MetaValue::I64Array(a),
            (_, Elements::F64(a)) => MetaValue::F64Array(a),
            (_, Elements::Strings(a)) => MetaValue::StringArray(StringArray::new(a)),
            (_, Elements::U16(a)) => MetaValue::U16Array(a),
            (_, Elements::I16(a)) => MetaValue::I16Array(a),
            (_, Elements::U32(a)) => MetaValue::U32Array(a),
            (_, Elements::I32(a)) => MetaValue::I32Array(a),
            (_, Elements::F32(a)) => MetaValue::F32Array(a),
            (_, Elements::None) => MetaValue::ArrayArray(ArrayArray::new(&[])),
        }
    }
}

/// Calls `f` with the view of the `array[]` holding `items`: see the module documentation.
fn with_array_array<R>(items: &[OwnedValue], f: impl FnOnce(MetaValue<'_>) -> R) -> R {
    // levels[0] is `items`; levels[k + 1] the items of the arrays of arrays of levels[k], in order.
    let mut levels: Vec<Vec<&OwnedValue>> = vec![items.iter().collect()];
    loop {
        let next: Vec<&OwnedValue> = levels
            .last()
            .into_iter()
            .flatten()
            .flat_map(|v| match v {
                OwnedValue::ArrayArray(inner) => inner.as_slice(),
                _ => &[],
            })
            .collect();
        if next.is_empty() {
            break;
        }
        levels.push(next);
    }
    let elements: Vec<Vec<Elements<'_>>> =
        levels.iter().map(|level| level.iter().map(|v| Elements::of(v)).collect()).collect();
    build_level(&levels, &elements, levels.len(), &[], f)
}

/// Builds the views of level `depth - 1` from those of the level below it (`below`), then recurses upwards;
/// at the top, calls `f` with the outermost `array[]`.
fn build_level<R>(
    levels: &[Vec<&OwnedValue>],
    elements: &[Vec<Elements<'_>>],
    depth: usize,
    below: &[MetaValue<'_>],
    f: impl FnOnce(MetaValue<'_>) -> R,
) -> R {
    let Some(level) = depth.checked_sub(1) else {
        return f(MetaValue::ArrayArray(ArrayArray::new(below)));
    };
    let (Some(values), Some(stores)) = (levels.get(level), elements.get(level)) else {
        return f(MetaValue::ArrayArray(ArrayArray::new(&[])));
    };
    let mut views = Vec::with_capacity(values.len());
    let mut next = 0usize;
    for (v, store) in values.iter().zip(stores) {
        match v {
            OwnedValue::ArrayArray(inner) => {
                let end = next.saturating_add(inner.len());
                views.push(MetaValue::ArrayArray(ArrayArray::new(below.get(next..end).unwrap_or(&[]))));
                next = end;
            }
            other => views.push(store.view(other)),
        }
    }
    build_level(levels, elements, level, &views, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(v: MetaValue<'_>) -> String {
        format!("{v:?}")
    }

    #[test]
    fn nested_arrays_are_viewed_with_every_level_in_place() {
        let v = OwnedValue::ArrayArray(vec![
            OwnedValue::U8Array(vec![1, 2]),
            OwnedValue::ArrayArray(vec![
                OwnedValue::I16Array(vec![-1]),
                OwnedValue::ArrayArray(vec![]),
                OwnedValue::StringArray(vec!["x".into()]),
            ]),
            OwnedValue::ArrayArray(vec![OwnedValue::ArrayArray(vec![OwnedValue::BoolArray(vec![true])])]),
            OwnedValue::F32Array(vec![f32::from_bits(0x7f80_0001)]),
        ]);
        let text = v.with_value(collect);
        assert_eq!(
            text,
            "ArrayArray([U8Array([1, 2]), ArrayArray([I16Array([I16(-1)]), ArrayArray([]), StringArray([\"x\"])]), \
             ArrayArray([ArrayArray([BoolArray([true])])]), F32Array([F32(NaN)])])"
        );
        v.with_value(|m| {
            let MetaValue::ArrayArray(items) = m else { panic!() };
            let last = items.last().unwrap();
            let MetaValue::F32Array(a) = last else { panic!() };
            assert_eq!(a[0].get().to_bits(), 0x7f80_0001, "a signalling NaN stays signalling");
        });
    }

    /// A million empty arrays: one frame per level, not per item.
    #[test]
    fn many_items_do_not_deepen_the_stack() {
        let v = OwnedValue::ArrayArray(vec![OwnedValue::U8Array(vec![]); 1_000_000]);
        assert_eq!(v.with_value(|m| if let MetaValue::ArrayArray(a) = m { a.count() } else { 0 }), 1_000_000);
    }
}
