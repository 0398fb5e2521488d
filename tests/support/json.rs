//! The canonical JSON decoding of spec §13, as the conformance kit compares it.

use serde_json::{json, Map, Value};
use tpack::{Container, MetaValue};

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn f64_hex(v: f64) -> Value {
    Value::String(format!("{:016x}", v.to_bits()))
}

fn f32_hex(v: f32) -> Value {
    Value::String(format!("{:08x}", v.to_bits()))
}

fn ints<T: Into<Value> + Copy>(values: impl IntoIterator<Item = T>) -> Value {
    Value::Array(values.into_iter().map(Into::into).collect())
}

/// A metadata value's §13 form: integers exact, floats as the hex of their bits, bytes as hex, an
/// `array[]` as a list of `{type, value}`.
fn value_json(value: MetaValue<'_>) -> Value {
    match value {
        MetaValue::U64(v) => json!(v),
        MetaValue::I64(v) => json!(v),
        MetaValue::F64(v) => f64_hex(v),
        MetaValue::Bool(v) => json!(v),
        MetaValue::String(s) => json!(s),
        MetaValue::Bytes(b) => json!(hex(b)),
        MetaValue::U64Array(a) => ints(a.iter().map(|v| v.get())),
        MetaValue::I64Array(a) => ints(a.iter().map(|v| v.get())),
        MetaValue::F64Array(a) => Value::Array(a.iter().map(|v| f64_hex(v.get())).collect()),
        MetaValue::StringArray(items) => json!(items.collect::<Vec<_>>()),
        MetaValue::U8(v) => json!(v),
        MetaValue::I8(v) => json!(v),
        MetaValue::U16(v) => json!(v),
        MetaValue::I16(v) => json!(v),
        MetaValue::U32(v) => json!(v),
        MetaValue::I32(v) => json!(v),
        MetaValue::F32(v) => f32_hex(v),
        MetaValue::U8Array(a) => ints(a.iter().copied()),
        MetaValue::I8Array(a) => ints(a.iter().copied()),
        MetaValue::U16Array(a) => ints(a.iter().map(|v| v.get())),
        MetaValue::I16Array(a) => ints(a.iter().map(|v| v.get())),
        MetaValue::U32Array(a) => ints(a.iter().map(|v| v.get())),
        MetaValue::I32Array(a) => ints(a.iter().map(|v| v.get())),
        MetaValue::F32Array(a) => Value::Array(a.iter().map(|v| f32_hex(v.get())).collect()),
        MetaValue::BoolArray(a) => ints(a.iter().copied()),
        MetaValue::ArrayArray(items) => Value::Array(
            items
                .map(|item| {
                    let type_name = item
                        .value_type()
                        .name()
                        .map_or_else(|| json!(item.value_type().code()), |n| json!(n));
                    json!({"type": type_name, "value": value_json(item)})
                })
                .collect(),
        ),
        MetaValue::Unknown { bytes, .. } => json!(hex(bytes)),
        other => panic!("metadata value {other:?} has no §13 form"),
    }
}

pub fn decode(container: &Container<'_>) -> Value {
    let (major, minor) = container.version();
    let entries: Vec<Value> = container
        .entries()
        .map(|e| {
            let mut m = Map::new();
            m.insert("name".into(), json!(e.name()));
            m.insert("dtype".into(), e.dtype().name().map_or_else(|| json!(e.dtype().code()), |n| json!(n)));
            m.insert("shape".into(), json!(e.shape().dims()));
            m.insert("offset".into(), json!(e.offset()));
            m.insert("length".into(), json!(e.byte_len()));
            m.insert("alignment".into(), json!(e.alignment()));
            m.insert("target".into(), json!(e.target()));
            m.insert("checksum".into(), json!(e.checksum()));
            if let Some(nested) = e.nested() {
                m.insert("container".into(), decode(&nested));
            }
            Value::Object(m)
        })
        .collect();
    let metadata: Vec<Value> = container
        .metadata()
        .iter()
        .map(|(key, value)| {
            let type_name =
                value.value_type().name().map_or_else(|| json!(value.value_type().code()), |n| json!(n));
            let value = value_json(value);
            json!({"key": key, "type": type_name, "value": value})
        })
        .collect();
    let mut decoding = json!({
        "version": [major, minor],
        "compat_flags": container.compat_flags(),
        "entries": entries,
        "metadata": metadata,
    });
    if let Some(signature) = signature_json(container) {
        decoding["signature"] = signature;
    }
    decoding
}

/// The `signature` object of a signed container's decoding (spec §13): its attributes and the message `M`.
pub fn signature_json(container: &Container<'_>) -> Option<Value> {
    let attributes = container.signed_attributes()?;
    let message = container.signed_message(&tpack::auth::SoftwareCrypto)?;
    Some(json!({
        "algorithm": attributes.algorithm_code,
        "key": hex(attributes.key_id),
        "counter": attributes.counter,
        "subject": attributes.subject,
        "public_key": attributes.public_key.map(hex),
        "message": hex(&message),
    }))
}
