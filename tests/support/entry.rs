//! An entry described in full and owned: what the writer and property tests declare, then expect to read back.

use tpack::write::EntryDecl;
use tpack::Dtype;

#[derive(Clone, Debug)]
pub struct EntrySpec {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    pub alignment: u32,
    pub target: Option<u64>,
    /// The payload.
    pub data: Vec<u8>,
}

impl EntrySpec {
    /// Its declaration, with its shape, alignment and target.
    pub fn decl(&self) -> EntryDecl<'_> {
        let mut decl = EntryDecl::new(&self.name, self.dtype, &self.shape).with_alignment(self.alignment);
        decl.target = self.target;
        decl
    }
}
