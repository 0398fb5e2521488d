//! The allow-list: the only globals a pickle may name. Everything else is refused by its name before any
//! further opcode is read; nothing is ever imported, looked up or called.

use super::value::Global;
use crate::element::Element;

/// The TorchScript module prefix: classes compiled by `torch.jit`, named but never resolved.
const SCRIPT_MODULE: &str = "__torch__";

/// What `module.name` is allowed as, or `None` if it is not allowed.
pub(crate) fn resolve<'a>(module: &'a str, name: &'a str) -> Option<Global<'a>> {
    Some(match (module, name) {
        ("torch._utils", "_rebuild_tensor_v2" | "_rebuild_tensor") => Global::RebuildTensor,
        ("torch._utils", "_rebuild_parameter" | "_rebuild_parameter_with_state") => Global::RebuildParameter,
        ("collections", "OrderedDict") => Global::OrderedDict,
        ("argparse", "Namespace") => Global::Namespace,
        ("numpy", "dtype") => Global::NumpyDtype,
        ("numpy._core.multiarray" | "numpy.core.multiarray", "scalar") => Global::NumpyScalar,
        ("_codecs", "encode") => Global::EncodeLatin1,
        (
            "torch.jit._pickle",
            "restore_type_tag" | "build_intlist" | "build_doublelist" | "build_boollist" | "build_tensorlist",
        ) => Global::PassThrough,
        ("torch", _) => match (Element::of_storage_class(name), Element::of_dtype(name)) {
            (Some(e), _) => Global::StorageClass(e),
            (None, Some(e)) => Global::Dtype(e),
            (None, None) => return None,
        },
        _ if module == SCRIPT_MODULE
            || module.strip_prefix(SCRIPT_MODULE).is_some_and(|m| m.starts_with('.')) =>
        {
            Global::ScriptClass { module, name }
        }
        _ => return None,
    })
}
