//! The checks of a pool value (spec §7.1, R47–R49), shared by the reader (which checks every record) and
//! [`MetaValue::from_encoded`](super::MetaValue::from_encoded) (which checks a caller's bytes).

use crate::error::Error;
use crate::format::{MetaType, MAX_ARRAY_DEPTH};

use super::{split_array_item, split_item, StringArray};

/// R47–R49 for a value stored in the pool: its framing first (R47), then its contents (R48, R49), which need
/// the framing of the whole value.
pub(crate) fn check_value(record: u32, value_type: MetaType, value: &[u8]) -> Result<(), Error> {
    check_framing(record, value_type, value, 1)?;
    check_contents(record, value_type, value)
}

/// Whether `value` is a valid pool value of the known pool type `value_type` (R47–R49): what
/// [`MetaValue::from_encoded`] checks.
pub(super) fn is_valid_pool_value(value_type: MetaType, value: &[u8]) -> bool {
    value_type.is_known() && !value_type.is_inline() && check_value(0, value_type, value).is_ok()
}

/// R47 for a pool value of `value_type`, at `array[]` level `depth` (1 for a record's own value).
fn check_framing(record: u32, value_type: MetaType, value: &[u8], depth: u8) -> Result<(), Error> {
    let shape = Error::MetaValueShape { record };
    match value_type {
        MetaType::STRING_ARRAY => {
            let mut rest = value;
            while !rest.is_empty() {
                let (_, tail) = split_item(rest).ok_or(shape)?;
                rest = tail;
            }
        }
        MetaType::ARRAY_ARRAY => {
            if depth > MAX_ARRAY_DEPTH {
                return Err(shape);
            }
            let mut rest = value;
            while !rest.is_empty() {
                let item = split_array_item(rest).ok_or(shape)?;
                if !item.reserved_zero || !item.value_type.is_array() {
                    return Err(shape);
                }
                check_framing(record, item.value_type, item.body, depth.saturating_add(1))?;
                rest = item.rest;
            }
        }
        other => {
            if let Some((width, scalar)) = other.pool_width() {
                let fits = if scalar { value.len() == width } else { value.len().is_multiple_of(width) };
                if !fits {
                    return Err(shape);
                }
            }
        }
    }
    Ok(())
}

/// R48–R49 for a pool value whose framing R47 accepted.
fn check_contents(record: u32, value_type: MetaType, value: &[u8]) -> Result<(), Error> {
    match value_type {
        MetaType::STRING if !crate::utf8::is_valid(value) => return Err(Error::MetaUtf8 { record }),
        MetaType::STRING_ARRAY
            if StringArray::encoded_items(value).any(|item| !crate::utf8::is_valid(item)) =>
        {
            return Err(Error::MetaUtf8 { record });
        }
        MetaType::BOOL_ARRAY if value.iter().any(|&b| b > 1) => return Err(Error::MetaBool { record }),
        MetaType::ARRAY_ARRAY => {
            let mut rest = value;
            while let Some(item) = split_array_item(rest) {
                check_contents(record, item.value_type, item.body)?;
                rest = item.rest;
            }
        }
        _ => {}
    }
    Ok(())
}
