//! The interpreter: one pass over the opcodes, a stack, marks and a memo, each bounded.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::globals::resolve;
use super::opcode as op;
use super::value::{Global, Node, NumpyDtype, Object, StorageRef, TensorView, Value};
use crate::bytes::{to_usize, u16_at, u32_at, u64_at};
use crate::error::{escaped, Error, Result};

/// The most values on the stack at once.
pub const MAX_STACK: usize = 1 << 20;
/// The most memo entries.
pub const MAX_MEMO: usize = 1 << 20;
/// The most marks open at once.
pub const MAX_MARKS: usize = 1 << 16;
/// How deeply containers may nest.
pub const MAX_DEPTH: usize = 100;
/// The most items put into containers in one pickle.
pub const MAX_ITEMS: u64 = 1 << 24;
/// The most dimensions of a tensor.
pub const MAX_RANK: usize = 64;
/// The most bytes of an int (LONG1, LONG4): the legacy magic number has 10.
const MAX_INT_BYTES: usize = 16;
/// The persistent-id tag of a storage.
const STORAGE_TAG: &str = "storage";

/// What a pickle held: its object, the storages it named, and where it stopped.
#[derive(Debug)]
pub struct Unpickled<'a> {
    /// The object `STOP` returned.
    pub value: Value<'a>,
    /// Each storage named, once, in the order first named.
    pub storages: Vec<Rc<StorageRef<'a>>>,
    /// Bytes read, up to and including `STOP`.
    pub consumed: usize,
}

/// The machine's state over one pickle.
struct Machine<'a, 'n> {
    /// Which pickle, for messages.
    pickle: &'n str,
    input: &'a [u8],
    at: usize,
    /// Where the current opcode starts.
    start: usize,
    stack: Vec<Value<'a>>,
    marks: Vec<usize>,
    memo: HashMap<u64, Value<'a>>,
    storages: HashMap<&'a str, Rc<StorageRef<'a>>>,
    order: Vec<Rc<StorageRef<'a>>>,
    items: u64,
}

/// Runs the pickle at the start of `input` (named `pickle` in messages) up to its `STOP`.
///
/// # Errors
/// [`Error::ForbiddenGlobal`] for any global off the allow-list; [`Error::Pickle`] for a malformed stream,
/// an opcode this machine refuses, or objects that are not what PyTorch writes; [`Error::Limit`] when a
/// bound is reached.
pub fn unpickle<'a>(pickle: &str, input: &'a [u8]) -> Result<Unpickled<'a>> {
    let mut m = Machine {
        pickle,
        input,
        at: 0,
        start: 0,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        storages: HashMap::new(),
        order: Vec::new(),
        items: 0,
    };
    let value = m.run()?;
    Ok(Unpickled { value, storages: m.order, consumed: m.at })
}

impl<'a> Machine<'a, '_> {
    fn err(&self, what: impl Into<String>) -> Error {
        Error::Pickle { pickle: self.pickle.to_owned(), offset: self.start as u64, what: what.into() }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let input = self.input;
        let stop = self.at.checked_add(n).filter(|&s| s <= input.len());
        let Some(stop) = stop else {
            return Err(self.err(format!(
                "the opcode needs {n} bytes, but only {} remain",
                input.len().saturating_sub(self.at)
            )));
        };
        let bytes = input.get(self.at..stop).unwrap_or_default();
        self.at = stop;
        Ok(bytes)
    }

    fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?.first().copied().unwrap_or(0))
    }

    fn u16(&mut self) -> Result<u16> {
        Ok(u16_at(self.take(2)?, 0).unwrap_or(0))
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32_at(self.take(4)?, 0).unwrap_or(0))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64_at(self.take(8)?, 0).unwrap_or(0))
    }

    /// `n` bytes where `n` came from the input as a u64: checked against what remains before anything else.
    fn counted(&mut self, n: u64) -> Result<&'a [u8]> {
        let remaining = self.input.len().saturating_sub(self.at);
        match to_usize(n).filter(|&n| n <= remaining) {
            Some(n) => self.take(n),
            None => Err(self.err(format!("a length of {n} bytes, but only {remaining} remain"))),
        }
    }

    /// A newline-terminated line (text opcodes).
    fn line(&mut self) -> Result<&'a str> {
        let rest = self.input.get(self.at..).unwrap_or_default();
        let len = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| self.err("a text argument has no newline"))?;
        let text = self.take(len)?;
        self.at = self.at.saturating_add(1);
        std::str::from_utf8(text).map_err(|_| self.err("a text argument is not UTF-8"))
    }

    fn text(&self, bytes: &'a [u8]) -> Result<&'a str> {
        std::str::from_utf8(bytes).map_err(|_| self.err("a string is not valid UTF-8"))
    }

    fn push(&mut self, v: Value<'a>) -> Result<()> {
        if self.stack.len() >= MAX_STACK {
            return Err(Error::Limit { what: "the pickle stack", limit: MAX_STACK as u64 });
        }
        self.stack.push(v);
        Ok(())
    }

    fn pop(&mut self) -> Result<Value<'a>> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err("the stack is empty"));
        }
        self.stack.pop().ok_or_else(|| self.err("the stack is empty"))
    }

    fn top(&self) -> Result<&Value<'a>> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err("the stack is empty"));
        }
        self.stack.last().ok_or_else(|| self.err("the stack is empty"))
    }

    /// The values above the last mark, removing the mark.
    fn pop_mark(&mut self) -> Result<Vec<Value<'a>>> {
        let mark = self.marks.pop().ok_or_else(|| self.err("no MARK is open"))?;
        Ok(self.stack.split_off(mark.min(self.stack.len())))
    }

    fn count_items(&mut self, n: usize) -> Result<()> {
        self.items = self.items.saturating_add(n as u64);
        if self.items > MAX_ITEMS {
            return Err(Error::Limit { what: "the items put in containers", limit: MAX_ITEMS });
        }
        Ok(())
    }

    /// The depth of a container holding `items`, checked against [`MAX_DEPTH`]; each item is sealed.
    fn adopt<'v>(&self, items: impl IntoIterator<Item = &'v Value<'a>>, parent: *const ()) -> Result<usize>
    where
        'a: 'v,
    {
        let mut depth = 1usize;
        for item in items {
            if item.is_at(parent) {
                return Err(self.err("a container is put inside itself"));
            }
            depth = depth.max(item.depth().saturating_add(1));
            item.seal();
        }
        if depth > MAX_DEPTH {
            return Err(Error::Limit { what: "the nesting depth of containers", limit: MAX_DEPTH as u64 });
        }
        Ok(depth)
    }

    fn tuple(&mut self, items: Vec<Value<'a>>) -> Result<Value<'a>> {
        self.count_items(items.len())?;
        let depth = self.adopt(&items, std::ptr::null())?;
        Ok(Value::Tuple(Node::new(items, depth)))
    }

    fn memo_put(&mut self, key: u64) -> Result<()> {
        let v = self.top()?.clone();
        if self.memo.len() >= MAX_MEMO && !self.memo.contains_key(&key) {
            return Err(Error::Limit { what: "the pickle memo", limit: MAX_MEMO as u64 });
        }
        self.memo.insert(key, v);
        Ok(())
    }

    fn memo_get(&mut self, key: u64) -> Result<()> {
        let v =
            self.memo.get(&key).cloned().ok_or_else(|| self.err(format!("memo entry {key} is not set")))?;
        self.push(v)
    }

    fn global(&self, module: &'a str, name: &'a str, opcode: &'static str) -> Result<Global<'a>> {
        resolve(module, name).ok_or_else(|| Error::ForbiddenGlobal {
            pickle: self.pickle.to_owned(),
            offset: self.start as u64,
            global: format!("{module}.{name}"),
            opcode,
        })
    }

    fn run(&mut self) -> Result<Value<'a>> {
        loop {
            self.start = self.at;
            let code = self.byte().map_err(|_| self.err("the pickle ends without STOP"))?;
            match code {
                op::PROTO => {
                    let p = self.byte()?;
                    if !(2..=5).contains(&p) {
                        return Err(
                            self.err(format!("pickle protocol {p} is not one PyTorch writes (2 to 5)"))
                        );
                    }
                }
                op::FRAME => drop(self.u64()?),
                op::STOP => return self.pop(),
                op::MARK => {
                    if self.marks.len() >= MAX_MARKS {
                        return Err(Error::Limit { what: "open marks", limit: MAX_MARKS as u64 });
                    }
                    self.marks.push(self.stack.len());
                }
                op::POP => drop(self.pop()?),
                op::POP_MARK => drop(self.pop_mark()?),
                op::DUP => {
                    let v = self.top()?.clone();
                    self.push(v)?;
                }
                op::NONE => self.push(Value::None)?,
                op::NEWTRUE => self.push(Value::Bool(true))?,
                op::NEWFALSE => self.push(Value::Bool(false))?,
                op::INT => {
                    let line = self.line()?;
                    let v = match line {
                        "00" => Value::Bool(false),
                        "01" => Value::Bool(true),
                        _ => Value::Int(line.parse().map_err(|_| self.err("INT is not a decimal integer"))?),
                    };
                    self.push(v)?;
                }
                op::BININT => {
                    let v = self.u32()?.cast_signed();
                    self.push(Value::Int(i128::from(v)))?;
                }
                op::BININT1 => {
                    let v = self.byte()?;
                    self.push(Value::Int(i128::from(v)))?;
                }
                op::BININT2 => {
                    let v = self.u16()?;
                    self.push(Value::Int(i128::from(v)))?;
                }
                op::LONG1 | op::LONG4 => {
                    let n = if code == op::LONG1 { u64::from(self.byte()?) } else { u64::from(self.u32()?) };
                    let bytes = self.counted(n)?;
                    self.push(Value::Int(self.long(bytes)?))?;
                }
                op::BINFLOAT => {
                    let bits = self.take(8)?;
                    let v = f64::from_be_bytes(bits.try_into().unwrap_or_default());
                    self.push(Value::Float(v))?;
                }
                op::SHORT_BINUNICODE
                | op::BINUNICODE
                | op::BINUNICODE8
                | op::SHORT_BINSTRING
                | op::BINSTRING => {
                    let n = match code {
                        op::SHORT_BINUNICODE | op::SHORT_BINSTRING => u64::from(self.byte()?),
                        op::BINUNICODE8 => self.u64()?,
                        _ => u64::from(self.u32()?),
                    };
                    let bytes = self.counted(n)?;
                    let s = self.text(bytes)?;
                    self.push(Value::Str(s))?;
                }
                op::SHORT_BINBYTES | op::BINBYTES | op::BINBYTES8 => {
                    let n = match code {
                        op::SHORT_BINBYTES => u64::from(self.byte()?),
                        op::BINBYTES8 => self.u64()?,
                        _ => u64::from(self.u32()?),
                    };
                    let bytes = self.counted(n)?;
                    self.push(Value::Bytes(bytes))?;
                }
                op::EMPTY_TUPLE => self.push(Value::Tuple(Node::new(Vec::new(), 1)))?,
                op::TUPLE => {
                    let items = self.pop_mark()?;
                    let t = self.tuple(items)?;
                    self.push(t)?;
                }
                op::TUPLE1 | op::TUPLE2 | op::TUPLE3 => {
                    let n = usize::from(code.saturating_sub(op::TUPLE1)).saturating_add(1);
                    let mut items = Vec::with_capacity(n);
                    for _ in 0..n {
                        items.push(self.pop()?);
                    }
                    items.reverse();
                    let t = self.tuple(items)?;
                    self.push(t)?;
                }
                op::EMPTY_LIST => self.push(Value::List(Node::new(Vec::new(), 1)))?,
                op::LIST => {
                    let items = self.pop_mark()?;
                    self.count_items(items.len())?;
                    let depth = self.adopt(&items, std::ptr::null())?;
                    self.push(Value::List(Node::new(items, depth)))?;
                }
                op::EMPTY_DICT => {
                    self.push(Value::Dict { ordered: false, node: Node::new(Vec::new(), 1) })?
                }
                op::DICT => {
                    let items = self.pop_mark()?;
                    let node = Node::new(Vec::new(), 1);
                    let dict = Value::Dict { ordered: false, node };
                    self.set_items(&dict, items)?;
                    self.push(dict)?;
                }
                op::APPEND => {
                    let item = self.pop()?;
                    let list = self.top()?.clone();
                    self.append(&list, vec![item])?;
                }
                op::APPENDS => {
                    let items = self.pop_mark()?;
                    let list = self.top()?.clone();
                    self.append(&list, items)?;
                }
                op::SETITEM => {
                    let value = self.pop()?;
                    let key = self.pop()?;
                    let dict = self.top()?.clone();
                    self.set_items(&dict, vec![key, value])?;
                }
                op::SETITEMS => {
                    let items = self.pop_mark()?;
                    let dict = self.top()?.clone();
                    self.set_items(&dict, items)?;
                }
                op::PUT => {
                    let line = self.line()?;
                    let key = line.parse().map_err(|_| self.err("PUT has no decimal index"))?;
                    self.memo_put(key)?;
                }
                op::BINPUT => {
                    let key = self.byte()?;
                    self.memo_put(u64::from(key))?;
                }
                op::LONG_BINPUT => {
                    let key = self.u32()?;
                    self.memo_put(u64::from(key))?;
                }
                op::MEMOIZE => self.memo_put(self.memo.len() as u64)?,
                op::GET => {
                    let line = self.line()?;
                    let key = line.parse().map_err(|_| self.err("GET has no decimal index"))?;
                    self.memo_get(key)?;
                }
                op::BINGET => {
                    let key = self.byte()?;
                    self.memo_get(u64::from(key))?;
                }
                op::LONG_BINGET => {
                    let key = self.u32()?;
                    self.memo_get(u64::from(key))?;
                }
                op::GLOBAL => {
                    let module = self.line()?;
                    let name = self.line()?;
                    let g = self.global(module, name, "GLOBAL")?;
                    self.push(Value::Global(g))?;
                }
                op::STACK_GLOBAL => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    let (Value::Str(module), Value::Str(name)) = (module, name) else {
                        return Err(self.err("STACK_GLOBAL needs two strings"));
                    };
                    let g = self.global(module, name, "STACK_GLOBAL")?;
                    self.push(Value::Global(g))?;
                }
                op::INST => {
                    let module = self.line()?;
                    let name = self.line()?;
                    let g = self.global(module, name, "INST")?;
                    let args = self.pop_mark()?;
                    let args = self.tuple(args)?;
                    let v = self.call(&g, &args)?;
                    self.push(v)?;
                }
                op::OBJ => {
                    let mut items = self.pop_mark()?.into_iter();
                    let class = items.next().ok_or_else(|| self.err("OBJ has no class"))?;
                    let args = self.tuple(items.collect())?;
                    let Value::Global(g) = class else {
                        return Err(self.err(format!("OBJ calls a {}, not a class", class.type_name())));
                    };
                    let v = self.call(&g, &args)?;
                    self.push(v)?;
                }
                op::REDUCE | op::NEWOBJ => {
                    let args = self.pop()?;
                    let callable = self.pop()?;
                    let Value::Global(g) = callable else {
                        return Err(self
                            .err(format!("REDUCE calls a {}, which is not callable", callable.type_name())));
                    };
                    let v = self.call(&g, &args)?;
                    self.push(v)?;
                }
                op::BUILD => {
                    let state = self.pop()?;
                    let target = self.top()?.clone();
                    self.build(&target, state)?;
                }
                op::BINPERSID | op::PERSID => {
                    let pid = if code == op::PERSID { Value::Str(self.line()?) } else { self.pop()? };
                    let storage = self.persistent_load(&pid)?;
                    self.push(Value::Storage(storage))?;
                }
                other => {
                    return Err(self.err(match op::refused_name(other) {
                        Some(name) => {
                            format!("opcode {name} is not one PyTorch checkpoints use, and is refused")
                        }
                        None => format!("byte {other:#04x} is not a pickle opcode"),
                    }))
                }
            }
        }
    }

    /// A LONG1/LONG4 value: little-endian two's complement.
    fn long(&self, bytes: &[u8]) -> Result<i128> {
        if bytes.len() > MAX_INT_BYTES {
            return Err(self
                .err(format!("an integer of {} bytes is larger than any a checkpoint holds", bytes.len())));
        }
        let negative = bytes.last().is_some_and(|&b| b & 0x80 != 0);
        let mut buf = if negative { [0xffu8; MAX_INT_BYTES] } else { [0u8; MAX_INT_BYTES] };
        for (slot, &b) in buf.iter_mut().zip(bytes) {
            *slot = b;
        }
        Ok(i128::from_le_bytes(buf))
    }

    fn append(&mut self, list: &Value<'a>, items: Vec<Value<'a>>) -> Result<()> {
        let Value::List(node) = list else {
            return Err(self.err(format!("APPEND to a {}, not a list", list.type_name())));
        };
        self.count_items(items.len())?;
        let depth = self.adopt(&items, Rc::as_ptr(node).cast())?;
        let mut held = node
            .items_mut()
            .ok_or_else(|| self.err("a list changes after it was put in another container"))?;
        held.extend(items);
        drop(held);
        node.deepen(depth.saturating_sub(1));
        Ok(())
    }

    fn set_items(&mut self, dict: &Value<'a>, items: Vec<Value<'a>>) -> Result<()> {
        let Value::Dict { node, .. } = dict else {
            return Err(self.err(format!("SETITEM on a {}, not a dict", dict.type_name())));
        };
        if !items.len().is_multiple_of(2) {
            return Err(self.err("SETITEMS has an odd number of values"));
        }
        self.count_items(items.len())?;
        let depth = self.adopt(&items, Rc::as_ptr(node).cast())?;
        let mut held = node
            .items_mut()
            .ok_or_else(|| self.err("a dict changes after it was put in another container"))?;
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            held.push((k, v));
        }
        drop(held);
        node.deepen(depth.saturating_sub(1));
        Ok(())
    }

    /// BUILD: an `OrderedDict`'s instance attributes (PyTorch's `_metadata`) are dropped; a TorchScript
    /// object takes its state once. Nothing else may be built.
    fn build(&mut self, target: &Value<'a>, state: Value<'a>) -> Result<()> {
        match target {
            Value::Dict { ordered: true, .. } => Ok(()),
            Value::Object(o) => {
                if o.state.borrow().is_some() {
                    return Err(self.err(format!("BUILD sets the state of a {} twice", escaped(&o.class))));
                }
                // Its depth was counted where it was put, so a state given later would go uncounted.
                if o.sealed.get() {
                    return Err(self.err(format!(
                        "BUILD sets the state of a {} after it was put in a container",
                        escaped(&o.class)
                    )));
                }
                let depth = self.adopt([&state], std::ptr::null())?;
                o.depth.set(depth);
                *o.state.borrow_mut() = Some(state);
                Ok(())
            }
            Value::NumpyDtype(d) => {
                let order = match &state {
                    Value::Tuple(items) => match items.items().get(1) {
                        Some(Value::Str(o @ ("<" | ">" | "|"))) => o.chars().next(),
                        _ => None,
                    },
                    _ => None,
                };
                match order {
                    Some(o) if d.order.get().is_none() => {
                        d.order.set(Some(o));
                        Ok(())
                    }
                    Some(_) => Err(self.err("BUILD sets a numpy.dtype's byte order twice")),
                    None => Err(self.err("BUILD gives a numpy.dtype a state without a byte order (<, > or |)")),
                }
            }
            other => Err(self.err(format!("BUILD on a {} is refused: only an OrderedDict's attributes, a TorchScript object's state, a Namespace's attributes and a numpy.dtype's byte order are read", other.type_name()))),
        }
    }

    /// What calling the allowed global `g` with `args` gives, computed here, never by calling anything.
    fn call(&mut self, g: &Global<'a>, args: &Value<'a>) -> Result<Value<'a>> {
        let Value::Tuple(args) = args else {
            return Err(self.err(format!("arguments are a {}, not a tuple", args.type_name())));
        };
        let args = args.items();
        match g {
            Global::RebuildTensor => Ok(Value::Tensor(Rc::new(self.tensor(&args)?))),
            Global::RebuildParameter | Global::PassThrough => {
                args.first().cloned().ok_or_else(|| self.err("a rebuild call has no arguments"))
            }
            Global::EncodeLatin1 => match args.as_slice() {
                [Value::Str(text), Value::Str("latin1" | "latin-1")] => Ok(Value::Latin1(text)),
                _ => Err(self.err("_codecs.encode is called with arguments other than (str, \"latin1\")")),
            },
            Global::OrderedDict if args.is_empty() => {
                Ok(Value::Dict { ordered: true, node: Node::new(Vec::new(), 1) })
            }
            // `copyreg.__newobj__(Namespace)`, as protocol 2 pickles an instance (NEWOBJ with no arguments).
            Global::Namespace if args.is_empty() => Ok(Value::Object(Rc::new(Object {
                class: "argparse.Namespace".to_owned(),
                state: RefCell::new(None),
                depth: Cell::new(1),
                sealed: Cell::new(false),
            }))),
            Global::NumpyDtype => match args.as_slice() {
                [Value::Str(code), Value::Bool(false), Value::Bool(true)]
                    if numpy_scalar_type(code).is_some() =>
                {
                    Ok(Value::NumpyDtype(Rc::new(NumpyDtype { code, order: Cell::new(None) })))
                }
                [Value::Str(code), Value::Bool(false), Value::Bool(true)] => Err(self.err(format!(
                    "numpy.dtype {:?} is not a number type tpack reads from a scalar (bool, ints, floats)",
                    escaped(code)
                ))),
                _ => Err(self.err("numpy.dtype is called with arguments other than (code, False, True)")),
            },
            Global::NumpyScalar => match args.as_slice() {
                [Value::NumpyDtype(d), Value::Bytes(b)] => self.numpy_scalar(d, b),
                [Value::NumpyDtype(d), Value::Latin1(text)] => {
                    // Protocol 2 spells bytes as latin-1 text: each character is one byte.
                    let bytes: Option<Vec<u8>> =
                        text.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect();
                    let bytes = bytes.ok_or_else(|| self.err("a numpy scalar's bytes are not latin-1"))?;
                    self.numpy_scalar(d, &bytes)
                }
                _ => Err(self.err("numpy scalar is called with arguments other than (numpy.dtype, bytes)")),
            },
            Global::ScriptClass { module, name } if args.is_empty() => Ok(Value::Object(Rc::new(Object {
                class: format!("{module}.{name}"),
                state: RefCell::new(None),
                depth: Cell::new(1),
                sealed: Cell::new(false),
            }))),
            other => Err(self
                .err(format!("{} is called with arguments PyTorch does not write", escaped(&other.name())))),
        }
    }

    /// The number a NumPy scalar of dtype `d` holds in `bytes`.
    fn numpy_scalar(&self, d: &NumpyDtype<'a>, bytes: &[u8]) -> Result<Value<'a>> {
        let Some((kind, width)) = numpy_scalar_type(d.code) else {
            return Err(self.err("a numpy scalar of a type tpack does not read"));
        };
        if bytes.len() != width {
            return Err(self.err(format!(
                "a numpy scalar of dtype {} has {} bytes, not {width}",
                escaped(d.code),
                bytes.len()
            )));
        }
        let big_endian = match d.order.get() {
            Some('<') => false,
            Some('>') => true,
            Some('|') if width == 1 => false,
            _ => {
                return Err(self.err(format!("a numpy scalar's dtype {} has no byte order", escaped(d.code))))
            }
        };
        let mut le = [0u8; 8];
        for (i, &b) in bytes.iter().enumerate() {
            let at = if big_endian { width - 1 - i } else { i };
            if let Some(slot) = le.get_mut(at) {
                *slot = b;
            }
        }
        let bits = u64::from_le_bytes(le);
        // Sign-extends the low `width` bytes.
        let signed = || {
            let shift = 64 - 8 * width as u32;
            i128::from((bits << shift) as i64 >> shift)
        };
        Ok(match kind {
            'b' => Value::Bool(bits != 0),
            'i' => Value::Int(signed()),
            'u' => Value::Int(i128::from(bits)),
            _ => Value::Float(match width {
                2 => f16_to_f64(bits as u16),
                4 => f64::from(f32::from_bits(bits as u32)),
                _ => f64::from_bits(bits),
            }),
        })
    }

    /// An int argument as a u64, for `what`.
    fn count(&self, v: &Value<'a>, what: &str) -> Result<u64> {
        match v {
            Value::Int(i) => u64::try_from(*i).map_err(|_| self.err(format!("{what} is {i}, not a count"))),
            other => Err(self.err(format!("{what} is a {}, not an int", other.type_name()))),
        }
    }

    /// A tuple or list of counts.
    fn counts(&self, v: &Value<'a>, what: &str) -> Result<Vec<u64>> {
        let (Value::Tuple(n) | Value::List(n)) = v else {
            return Err(self.err(format!("{what} is a {}, not a tuple", v.type_name())));
        };
        let items = n.items();
        if items.len() > MAX_RANK {
            return Err(self.err(format!("{what} has {} dimensions, more than {MAX_RANK}", items.len())));
        }
        items.iter().map(|i| self.count(i, what)).collect()
    }

    /// `_rebuild_tensor_v2(storage, storage_offset, size, stride, ...)`, the view checked against the storage.
    fn tensor(&self, args: &[Value<'a>]) -> Result<TensorView<'a>> {
        let [storage, offset, size, stride, ..] = args else {
            return Err(self.err("_rebuild_tensor_v2 has fewer than 4 arguments"));
        };
        let Value::Storage(storage) = storage else {
            return Err(self.err(format!("a tensor is built over a {}, not a storage", storage.type_name())));
        };
        let offset = self.count(offset, "a tensor's storage offset")?;
        let size = self.counts(size, "a tensor's size")?;
        let stride = self.counts(stride, "a tensor's stride")?;
        if size.len() != stride.len() {
            return Err(self.err(format!("a tensor has {} sizes but {} strides", size.len(), stride.len())));
        }
        let view = TensorView { storage: Rc::clone(storage), offset, size, stride };
        match crate::view::extent(&view) {
            Some(end) if end <= storage.numel => Ok(view),
            end => Err(Error::Checkpoint(format!(
                "a tensor of shape {:?} and stride {:?} at offset {} needs {} elements of storage \"{}\", which has \
                 only {} (a storage shorter than a view)",
                view.size,
                view.stride,
                view.offset,
                end.map_or_else(|| "more than 2^64".to_owned(), |e| e.to_string()),
                escaped(storage.key),
                storage.numel
            ))),
        }
    }

    /// `persistent_load(('storage', storage_class, key, location, numel[, view_metadata]))`.
    fn persistent_load(&mut self, pid: &Value<'a>) -> Result<Rc<StorageRef<'a>>> {
        let Value::Tuple(t) = pid else {
            return Err(self.err(format!("a persistent id is a {}, not a storage tuple", pid.type_name())));
        };
        let items = t.items();
        let (tag, class, key, numel) = match items.as_slice() {
            [tag, class, key, _location, numel] => (tag, class, key, numel),
            [tag, class, key, _location, numel, Value::None] => (tag, class, key, numel),
            [_, _, _, _, _, _] => {
                return Err(self.err("a storage view of the legacy format (PyTorch before 0.4) is not read"))
            }
            _ => return Err(self.err(format!("a persistent id has {} fields, not 5", items.len()))),
        };
        if !matches!(tag, Value::Str(STORAGE_TAG)) {
            return Err(self.err("a persistent id is not tagged \"storage\""));
        }
        let element = match class {
            Value::Global(Global::StorageClass(e) | Global::Dtype(e)) => *e,
            other => {
                return Err(
                    self.err(format!("a storage's type is a {}, not a storage class", other.type_name()))
                )
            }
        };
        let key = match key {
            Value::Str(k) => *k,
            other => return Err(self.err(format!("a storage key is a {}, not a str", other.type_name()))),
        };
        let numel = self.count(numel, "a storage's length")?;
        let storage = StorageRef { key, element, numel };
        if let Some(known) = self.storages.get(key) {
            if **known != storage {
                return Err(Error::Checkpoint(format!(
                    "storage \"{}\" is named twice with different types or lengths ({} × {}, then {} × {})",
                    escaped(key),
                    known.numel,
                    known.element.dtype_name(),
                    numel,
                    element.dtype_name()
                )));
            }
            return Ok(Rc::clone(known));
        }
        let storage = Rc::new(storage);
        self.storages.insert(key, Rc::clone(&storage));
        self.order.push(Rc::clone(&storage));
        Ok(storage)
    }
}

/// The kind (`b`ool, `i`nt, `u`nsigned, `f`loat) and byte width of the NumPy scalar type `code`, if tpack reads
/// it.
fn numpy_scalar_type(code: &str) -> Option<(char, usize)> {
    Some(match code {
        "b1" => ('b', 1),
        "i1" => ('i', 1),
        "i2" => ('i', 2),
        "i4" => ('i', 4),
        "i8" => ('i', 8),
        "u1" => ('u', 1),
        "u2" => ('u', 2),
        "u4" => ('u', 4),
        "u8" => ('u', 8),
        "f2" => ('f', 2),
        "f4" => ('f', 4),
        "f8" => ('f', 8),
        _ => return None,
    })
}

/// An IEEE 754 binary16 value, exactly.
fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((h >> 10) & 0x1f);
    let fraction = f64::from(h & 0x3ff);
    sign * match exponent {
        0 => fraction * 2f64.powi(-24),
        0x1f if fraction == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        e => (1.0 + fraction / 1024.0) * 2f64.powi(e - 15),
    }
}
