//! The checked, shaped tool surface the pipeline builds: each tool's record and, per server,
//! the session its calls go out on. Replaced whole by each rebuild.

use std::collections::HashMap;
use std::sync::Arc;

use super::record::ToolRecord;
use crate::config::ServerDef;
use crate::runtime::connection::Connection;

/// A server whose tools are on the surface: what a call to one of them needs.
#[derive(Clone)]
pub struct Served {
    /// Its definition (the wire record for other shapes, the call timeout).
    pub def: ServerDef,
    /// The session calls go out on; `None` while its tools are its last-known listing (the
    /// server still connecting): a call waits for it.
    pub conn: Option<Arc<Connection>>,
}

/// The checked, shaped tool surface: the records in definition order (each server's tools
/// together) and, per server, the session their calls go to.
#[derive(Default, Clone)]
pub struct Registry {
    /// Shared: a call's route and a caller's lookup take a reference, not a copy of the
    /// tool's schemas and shaped JSON.
    records: Vec<Arc<ToolRecord>>,
    by_name: HashMap<String, usize>,
    servers: HashMap<String, Served>,
    /// Tools the trust step held, by the name they would have: a call of one says why.
    held: HashMap<String, HeldCall>,
}

/// Why a call of a held tool is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldCall {
    /// The server that lists it.
    pub server: String,
    /// The server's own name for it.
    pub tool: String,
    /// `changed since pinned`, `not pinned`, `finding TP003`.
    pub reason: String,
}

impl Registry {
    /// Appends one server's records (already shaped); the pipeline calls it in definition order.
    pub fn add_server(&mut self, def: ServerDef, conn: Option<Arc<Connection>>, records: Vec<ToolRecord>) {
        for record in records {
            self.by_name.insert(record.name.clone(), self.records.len());
            self.records.push(Arc::new(record));
        }
        self.servers.insert(def.name.clone(), Served { def, conn });
    }

    /// Remembers that the tool that would be `name` on the surface is held, and why.
    pub fn hold(&mut self, name: &str, server: &str, tool: &str, reason: &str) {
        let why = HeldCall { server: server.to_string(), tool: tool.to_string(), reason: reason.to_string() };
        self.held.insert(name.to_string(), why);
    }

    /// Why the tool `name` is held, if it is.
    pub fn held(&self, name: &str) -> Option<&HeldCall> {
        self.held.get(name)
    }

    /// Every record, in surface order.
    pub fn records(&self) -> &[Arc<ToolRecord>] {
        &self.records
    }

    /// The record named `name` on the surface and the server that serves it.
    pub fn route(&self, name: &str) -> Option<(&Arc<ToolRecord>, &Served)> {
        let record = self.records.get(*self.by_name.get(name)?)?;
        Some((record, self.servers.get(&record.server)?))
    }

    /// Each server's records with its definition, in surface order (for converting to another
    /// shape, which runs per server).
    pub fn by_server(&self) -> Vec<(&ServerDef, &[Arc<ToolRecord>])> {
        let mut out: Vec<(&ServerDef, &[Arc<ToolRecord>])> = Vec::new();
        let mut start = 0;
        while let Some(first) = self.records.get(start) {
            let len = self.records[start..].iter().take_while(|r| r.server == first.server).count();
            if let Some(served) = self.servers.get(&first.server) {
                out.push((&served.def, &self.records[start..start + len]));
            }
            start += len;
        }
        out
    }
}
