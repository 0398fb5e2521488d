//! What the machine builds: plain values, containers that know their depth, and the few PyTorch objects it
//! allows — none of them executable.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::element::Element;

/// A container's items with what keeps the object graph a bounded tree: its nesting depth, and whether it
/// was already put inside another container (after which it may not change, so a depth once counted stays
/// true and no cycle can form).
#[derive(Debug)]
pub struct Node<T> {
    items: RefCell<T>,
    depth: Cell<usize>,
    sealed: Cell<bool>,
}

impl<T> Node<T> {
    /// A new container holding `items` of the given depth.
    pub(crate) fn new(items: T, depth: usize) -> Rc<Node<T>> {
        Rc::new(Node { items: RefCell::new(items), depth: Cell::new(depth), sealed: Cell::new(false) })
    }

    /// The items.
    pub fn items(&self) -> std::cell::Ref<'_, T> {
        self.items.borrow()
    }

    /// The items, to change: `None` once the container is inside another.
    pub(crate) fn items_mut(&self) -> Option<std::cell::RefMut<'_, T>> {
        (!self.sealed.get()).then(|| self.items.borrow_mut())
    }

    /// Records that a child of depth `child` was added.
    pub(crate) fn deepen(&self, child: usize) {
        self.depth.set(self.depth.get().max(child.saturating_add(1)));
    }
}

/// A storage as `persistent_load` names it: where its bytes are and how many elements of which type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageRef<'a> {
    /// The key that names its bytes (`data/<key>` in an archive, a record of a legacy file).
    pub key: &'a str,
    /// Its element type.
    pub element: Element,
    /// Its length in elements.
    pub numel: u64,
}

/// A tensor: a strided view of a storage, as `_rebuild_tensor_v2` describes it. The view lies inside the
/// storage (checked when built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorView<'a> {
    /// Its storage.
    pub storage: Rc<StorageRef<'a>>,
    /// The offset of its first element, in elements.
    pub offset: u64,
    /// Its shape, outermost first.
    pub size: Vec<u64>,
    /// The step in elements between neighbours along each dimension.
    pub stride: Vec<u64>,
}

/// An allowed global: something a pickle may name, which the machine interprets itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Global<'a> {
    /// `torch._utils._rebuild_tensor_v2` (and `_rebuild_tensor`, its older form without the last arguments).
    RebuildTensor,
    /// `torch._utils._rebuild_parameter` and `_rebuild_parameter_with_state`: the tensor, unchanged.
    RebuildParameter,
    /// `collections.OrderedDict`: an empty ordered dict.
    OrderedDict,
    /// `_codecs.encode(text, "latin1")`, how protocol 2 spells a `bytes` object: the text, kept as it is.
    EncodeLatin1,
    /// `torch.jit._pickle.restore_type_tag` and the `build_*list` helpers of TorchScript: their first
    /// argument, unchanged.
    PassThrough,
    /// A storage class (`torch.FloatStorage`, `torch.UntypedStorage`): a name in persistent ids.
    StorageClass(Element),
    /// A dtype (`torch.float32`).
    Dtype(Element),
    /// `argparse.Namespace`, the `args` of many training checkpoints (fairseq's): an instance is a record of
    /// its attributes, as a TorchScript object is of its state.
    Namespace,
    /// `numpy.dtype(code, False, True)`: the type of a NumPy scalar.
    NumpyDtype,
    /// `numpy._core.multiarray.scalar(dtype, bytes)` (`numpy.core.multiarray` before NumPy 2): a NumPy scalar,
    /// read as the Python number it holds.
    NumpyScalar,
    /// A TorchScript class (`__torch__.…`): instances are opaque records of their state.
    ScriptClass {
        /// Its module, `__torch__` or under it.
        module: &'a str,
        /// Its name.
        name: &'a str,
    },
}

impl Global<'_> {
    /// The name a pickle gives it (`collections.OrderedDict`), for messages.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Global::RebuildTensor => "torch._utils._rebuild_tensor_v2".to_owned(),
            Global::RebuildParameter => "torch._utils._rebuild_parameter".to_owned(),
            Global::OrderedDict => "collections.OrderedDict".to_owned(),
            Global::EncodeLatin1 => "_codecs.encode".to_owned(),
            Global::PassThrough => "a torch.jit._pickle helper".to_owned(),
            Global::StorageClass(e) => format!("the storage class of torch.{}", e.dtype_name()),
            Global::Dtype(e) => format!("torch.{}", e.dtype_name()),
            Global::Namespace => "argparse.Namespace".to_owned(),
            Global::NumpyDtype => "numpy.dtype".to_owned(),
            Global::NumpyScalar => "numpy._core.multiarray.scalar".to_owned(),
            Global::ScriptClass { module, name } => format!("{module}.{name}"),
        }
    }
}

/// An object of a class the machine records, never instantiates (a TorchScript class, `argparse.Namespace`):
/// its class name and the state `BUILD` gave it.
#[derive(Debug)]
pub struct Object<'a> {
    /// `__torch__.…`.
    pub class: String,
    /// Its state, usually a dict of attributes; `None` before `BUILD`.
    pub state: RefCell<Option<Value<'a>>>,
    /// Its depth (that of its state plus one).
    pub(crate) depth: Cell<usize>,
    /// Whether it is inside a container, after which its state may not be set (its depth is counted there).
    pub(crate) sealed: Cell<bool>,
}

/// A value on the machine's stack, borrowing strings from the pickle.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// `None`.
    None,
    /// A bool.
    Bool(bool),
    /// An int (the legacy magic number needs 80 bits).
    Int(i128),
    /// A float.
    Float(f64),
    /// A str.
    Str(&'a str),
    /// A bytes object.
    Bytes(&'a [u8]),
    /// A bytes object spelled as latin-1 text (`_codecs.encode(text, "latin1")`), not decoded.
    Latin1(&'a str),
    /// A tuple.
    Tuple(Rc<Node<Vec<Value<'a>>>>),
    /// A list.
    List(Rc<Node<Vec<Value<'a>>>>),
    /// A dict (`ordered`: a `collections.OrderedDict`), in insertion order.
    Dict {
        /// Whether it is an `OrderedDict`.
        ordered: bool,
        /// The pairs.
        node: Rc<Node<Vec<(Value<'a>, Value<'a>)>>>,
    },
    /// An allowed global.
    Global(Global<'a>),
    /// A storage.
    Storage(Rc<StorageRef<'a>>),
    /// A tensor.
    Tensor(Rc<TensorView<'a>>),
    /// An object of a recorded class (a TorchScript class, `argparse.Namespace`).
    Object(Rc<Object<'a>>),
    /// A NumPy dtype, for the scalars that name it.
    NumpyDtype(Rc<NumpyDtype<'a>>),
}

/// A NumPy dtype as a pickle builds it: `numpy.dtype(code, False, True)`, then `BUILD` with a state tuple whose
/// second item is the byte order.
#[derive(Debug)]
pub struct NumpyDtype<'a> {
    /// The type code (`f8`, `i4`, `u1`, `b1`).
    pub code: &'a str,
    /// The byte order `BUILD` gave (`<`, `>`, or `|` for one-byte types); `None` before.
    pub order: Cell<Option<char>>,
}

impl Value<'_> {
    /// How deeply containers nest in it (0 for a scalar).
    #[must_use]
    pub fn depth(&self) -> usize {
        match self {
            Value::Tuple(n) | Value::List(n) => n.depth.get(),
            Value::Dict { node, .. } => node.depth.get(),
            Value::Object(o) => o.depth.get(),
            Value::Tensor(_) => 1,
            _ => 0,
        }
    }

    /// Marks it as inside another container, after which it may not change.
    pub(crate) fn seal(&self) {
        match self {
            Value::Tuple(n) | Value::List(n) => n.sealed.set(true),
            Value::Dict { node, .. } => node.sealed.set(true),
            Value::Object(o) => o.sealed.set(true),
            _ => {}
        }
    }

    /// Whether it is the container `ptr` points to.
    pub(crate) fn is_at(&self, ptr: *const ()) -> bool {
        match self {
            Value::Tuple(n) | Value::List(n) => std::ptr::eq(Rc::as_ptr(n).cast(), ptr),
            Value::Dict { node, .. } => std::ptr::eq(Rc::as_ptr(node).cast(), ptr),
            _ => false,
        }
    }

    /// The Python type's name, for messages.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) | Value::Latin1(_) => "bytes",
            Value::Tuple(_) => "tuple",
            Value::List(_) => "list",
            Value::Dict { ordered: true, .. } => "OrderedDict",
            Value::Dict { .. } => "dict",
            Value::Global(_) => "global",
            Value::Storage(_) => "storage",
            Value::Tensor(_) => "tensor",
            Value::Object(_) => "object",
            Value::NumpyDtype(_) => "numpy.dtype",
        }
    }
}
