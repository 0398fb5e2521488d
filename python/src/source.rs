//! The bytes a container is read from, shared by every object that views them, and a parsed container that
//! keeps its bytes alive.

use std::sync::Arc;

use tpack::auth::{Authenticated, Policy, SoftwareCrypto};
use tpack::{Container, Error, MappedFile};
use zerocopy::{Immutable, IntoBytes};

/// Where a container's bytes live. Neither kind ever moves or changes its bytes while it exists, which is what
/// [`Parsed`] relies on.
pub enum Bytes {
    /// A read-only memory map of a file.
    Mapped(MappedFile),
    /// A private copy in memory (`tpack.load_bytes`), 64-byte aligned like a file's payloads.
    Heap(AlignedBuf),
}

impl Bytes {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Bytes::Mapped(file) => file.as_bytes(),
            Bytes::Heap(buf) => buf.as_bytes(),
        }
    }
}

/// One 64-byte block: the unit [`AlignedBuf`] allocates in, so that its start is 64-byte aligned.
#[derive(Clone, Copy, IntoBytes, Immutable)]
#[repr(C, align(64))]
struct Block([u8; 64]);

/// A heap copy of some bytes starting at a 64-byte boundary, so that payloads aligned in the container are
/// aligned in memory too (numpy's `ALIGNED` flag).
pub struct AlignedBuf {
    blocks: Vec<Block>,
    len: usize,
}

impl AlignedBuf {
    pub fn copy_from(bytes: &[u8]) -> Self {
        let mut blocks = vec![Block([0; 64]); bytes.len().div_ceil(64)];
        for (block, chunk) in blocks.iter_mut().zip(bytes.chunks(64)) {
            if let Some(dst) = block.0.get_mut(..chunk.len()) {
                dst.copy_from_slice(chunk);
            }
        }
        Self { blocks, len: bytes.len() }
    }

    fn as_bytes(&self) -> &[u8] {
        self.blocks.as_bytes().get(..self.len).unwrap_or_default()
    }
}

/// A validated container together with the bytes it borrows.
///
/// The core's `Container<'a>` borrows its bytes; a Python object cannot carry a lifetime, so the container is
/// stored as `Container<'static>` next to the `Arc` that owns those bytes, and only ever handed out re-borrowed
/// for the lifetime of `&self` ([`Parsed::container`]). Rejected: re-parsing on every call, which is O(entries)
/// per tensor read.
#[derive(Clone)]
pub struct Parsed {
    /// Borrows `*owner`; declared first so that it is dropped first (it has no `Drop` anyway).
    container: Container<'static>,
    /// The container once its signature was checked against a policy (`Parsed::authenticate`); borrows
    /// `*owner` like `container`.
    authenticated: Option<Authenticated<'static>>,
    owner: Arc<Bytes>,
}

impl Parsed {
    /// Parses `owner`'s bytes (every structural rule).
    pub fn new(owner: Arc<Bytes>) -> Result<Self, Error> {
        let bytes: *const [u8] = owner.as_bytes();
        // SAFETY: the bytes belong to `owner`, which this value keeps alive for as long as it holds the
        // container; a map and a heap buffer never move or change their bytes while they live; and the
        // 'static lifetime never escapes: `container()` re-borrows it for `&self` only.
        #[allow(unsafe_code)]
        let bytes: &'static [u8] = unsafe { &*bytes };
        let container = Container::parse(bytes)?;
        Ok(Self { container, authenticated: None, owner })
    }

    /// The nested container that entry `position` holds, sharing this one's bytes; `None` when the entry is
    /// not a `CONTAINER`.
    pub fn nested(&self, position: usize) -> Option<Parsed> {
        let nested = self.container.entry(position)?.nested()?;
        Some(Self { container: nested, authenticated: None, owner: Arc::clone(&self.owner) })
    }

    pub fn container(&self) -> Container<'_> {
        self.container
    }

    /// Checks the signature against `policy` (R58–R63: the prefix and the digests only, never a payload) and
    /// keeps the result for [`Parsed::authenticated`].
    pub fn authenticate(&mut self, policy: &Policy<'_>) -> Result<(), Error> {
        self.authenticated = Some(self.container.authenticate(policy, &SoftwareCrypto)?);
        Ok(())
    }

    /// The container as authenticated by [`Parsed::authenticate`], or `None` if no policy was applied.
    pub fn authenticated(&self) -> Option<Authenticated<'_>> {
        self.authenticated
    }

    pub fn owner(&self) -> &Arc<Bytes> {
        &self.owner
    }
}
