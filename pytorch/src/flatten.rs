//! The object a checkpoint holds, as named leaves: dicts and TorchScript objects flatten with dots, lists
//! and tuples with indices (`layers.0.weight`).

use std::rc::Rc;

use crate::error::{escaped, Error, Result};
use crate::pickle::{TensorView, Value};

/// The most leaves and containers visited: shared sub-objects are visited once per reference, so a small
/// pickle could otherwise name exponentially many.
pub const MAX_VISITS: u64 = 1 << 22;
/// The longest flattened name, in bytes.
pub const MAX_NAME: usize = 1 << 16;
/// The name of a checkpoint that is one tensor.
pub const ROOT_TENSOR: &str = "tensor";

/// A plain value kept as metadata.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'a> {
    /// An int that fits an i64.
    Int(i64),
    /// A float.
    Float(f64),
    /// A str.
    Str(&'a str),
    /// A bool.
    Bool(bool),
}

/// The leaves of an object.
#[derive(Debug, Default)]
pub struct Leaves<'a> {
    /// Tensors by name, in order.
    pub tensors: Vec<(String, Rc<TensorView<'a>>)>,
    /// Plain values by name, in order.
    pub values: Vec<(String, Scalar<'a>)>,
    /// Names of values neither a tensor nor a plain value that fits (bytes, huge ints, storages, ...).
    pub skipped: Vec<String>,
}

/// Flattens `root` into leaves named under `prefix` (empty for the top).
///
/// # Errors
/// [`Error::Checkpoint`] for a dict key that is neither a str nor an int; [`Error::Limit`] past
/// [`MAX_VISITS`] or [`MAX_NAME`].
pub fn flatten<'a>(root: &Value<'a>, prefix: &str, leaves: &mut Leaves<'a>) -> Result<()> {
    let mut visits = 0u64;
    walk(root, prefix.to_owned(), leaves, &mut visits)
}

fn join(prefix: &str, part: &str) -> Result<String> {
    let name = if prefix.is_empty() { part.to_owned() } else { format!("{prefix}.{part}") };
    if name.len() > MAX_NAME {
        return Err(Error::Limit { what: "a flattened name's length", limit: MAX_NAME as u64 });
    }
    Ok(name)
}

/// Depth is bounded by the machine (`MAX_DEPTH`), so this recursion is too.
fn walk<'a>(v: &Value<'a>, name: String, leaves: &mut Leaves<'a>, visits: &mut u64) -> Result<()> {
    *visits = visits.saturating_add(1);
    if *visits > MAX_VISITS {
        return Err(Error::Limit { what: "the values visited while naming tensors", limit: MAX_VISITS });
    }
    let leaf_name = |name: String| if name.is_empty() { ROOT_TENSOR.to_owned() } else { name };
    match v {
        Value::Tensor(t) => leaves.tensors.push((leaf_name(name), Rc::clone(t))),
        Value::Int(i) => match i64::try_from(*i) {
            Ok(i) => leaves.values.push((leaf_name(name), Scalar::Int(i))),
            Err(_) => leaves.skipped.push(leaf_name(name)),
        },
        Value::Float(f) => leaves.values.push((leaf_name(name), Scalar::Float(*f))),
        Value::Str(s) => leaves.values.push((leaf_name(name), Scalar::Str(s))),
        Value::Bool(b) => leaves.values.push((leaf_name(name), Scalar::Bool(*b))),
        Value::None => {}
        Value::Tuple(n) | Value::List(n) => {
            for (i, item) in n.items().iter().enumerate() {
                walk(item, join(&name, &i.to_string())?, leaves, visits)?;
            }
        }
        Value::Dict { node, .. } => {
            for (key, item) in node.items().iter() {
                let part = match key {
                    Value::Str(s) => (*s).to_owned(),
                    Value::Int(i) => i.to_string(),
                    other => {
                        return Err(Error::Checkpoint(format!(
                            "a dict under \"{}\" has a key of type {}; tensor names are built from str and int keys",
                            escaped(&name),
                            other.type_name()
                        )))
                    }
                };
                walk(item, join(&name, &part)?, leaves, visits)?;
            }
        }
        Value::Object(o) => {
            if let Some(state) = o.state.borrow().as_ref() {
                walk(state, name, leaves, visits)?;
            }
        }
        Value::Bytes(_) | Value::Latin1(_) | Value::Global(_) | Value::Storage(_) | Value::NumpyDtype(_) => {
            leaves.skipped.push(leaf_name(name))
        }
    }
    Ok(())
}
