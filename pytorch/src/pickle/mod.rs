//! A restricted pickle machine: it reads the opcodes `torch.save` (protocol 2 by default, up to 5) and
//! TorchScript's pickler write, and builds only plain values and the few PyTorch objects a checkpoint is
//! made of. It never imports, looks up or calls anything.
//!
//! Allowed globals (the private `globals` module): `torch._utils._rebuild_tensor_v2` / `_rebuild_tensor` (a
//! tensor: a view of a storage, checked to lie inside it), `torch._utils._rebuild_parameter` /
//! `_rebuild_parameter_with_state` (the tensor it wraps), `collections.OrderedDict` (an empty ordered dict;
//! `BUILD` attributes such as PyTorch's `_metadata` are dropped), `_codecs.encode(text, "latin1")` (how
//! protocol 2 spells bytes: kept as the text, never decoded or called), the storage classes `torch.FloatStorage`
//! … `torch.BFloat16Storage` and `torch.UntypedStorage`, dtypes `torch.float32` …, TorchScript's
//! `torch.jit._pickle.restore_type_tag` and `build_*list` helpers (their argument), TorchScript classes
//! `__torch__.…` and `argparse.Namespace` (records of the state `BUILD` gives them), and NumPy scalars
//! (`numpy._core.multiarray.scalar` of a `numpy.dtype` of bool, int or float: the number it holds). Any other global is refused by its name
//! at the `GLOBAL`, `STACK_GLOBAL` or `INST` that names it. Storages come only from `persistent_load` ids
//! `('storage', class, key, location, numel)`.
//!
//! Bounds: the stack, the memo, open marks, container nesting and the items put into containers are each
//! limited (`MAX_*`); every length is checked against the input left before it is used, and strings are
//! views of the input, so memory stays proportional to the input within those limits and time linear in it.
//! A container may not change once it is inside another, which keeps the object graph acyclic and its
//! recorded depth exact.

mod globals;
mod machine;
mod opcode;
mod value;

pub use machine::{unpickle, Unpickled, MAX_DEPTH, MAX_ITEMS, MAX_MARKS, MAX_MEMO, MAX_RANK, MAX_STACK};
pub use value::{Global, Node, Object, StorageRef, TensorView, Value};
