//! Components built in the test from a hand-written core module, for hostile shapes a Rust
//! guest never compiles to (a store with several linear memories). The core module carries the
//! real `tool-shape` world from `wit/since_v0.1.0`, so the host loads it like any plugin.

use std::path::Path;

use wasm_encoder::{
    CodeSection, ExportKind, ExportSection, Function, FunctionSection, Instruction, MemorySection,
    MemoryType, Module, TypeSection, ValType,
};
use wit_component::{ComponentEncoder, StringEncoding, embed_component_metadata};
use wit_parser::Resolve;

/// A `tool-shape` component whose core module defines `memories` linear memories of
/// `pages` 64 KiB pages each. Its `convert` traps: it must never get that far.
pub fn shape_with_memories(memories: u32, pages: u64) -> Vec<u8> {
    let mut types = TypeSection::new();
    // convert: params and result both spill to memory (one pointer each way).
    types.ty().function([ValType::I32], [ValType::I32]);
    // cabi_realloc(old, old_size, align, new_size) -> ptr
    types.ty().function([ValType::I32; 4], [ValType::I32]);
    let mut functions = FunctionSection::new();
    functions.function(0);
    functions.function(1);
    let mut memory = MemorySection::new();
    for _ in 0..memories {
        memory.memory(MemoryType {
            minimum: pages,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
    }
    let mut exports = ExportSection::new();
    let convert = format!("toolport:plugin/shape@{}#convert", toolport::plugins::WIT_VERSION);
    exports.export(&convert, ExportKind::Func, 0);
    exports.export("cabi_realloc", ExportKind::Func, 1);
    exports.export("memory", ExportKind::Memory, 0);
    let mut code = CodeSection::new();
    for _ in 0..2 {
        let mut body = Function::new([]);
        body.instruction(&Instruction::Unreachable);
        body.instruction(&Instruction::End);
        code.function(&body);
    }
    let mut module = Module::new();
    module.section(&types).section(&functions).section(&memory).section(&exports).section(&code);
    let mut bytes = module.finish();

    let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit/since_v0.1.0");
    let mut resolve = Resolve::default();
    let (package, _) = resolve.push_dir(&wit).unwrap_or_else(|e| panic!("parse {}: {e:#}", wit.display()));
    let world =
        resolve.select_world(&[package], Some("tool-shape")).unwrap_or_else(|e| panic!("world: {e:#}"));
    embed_component_metadata(&mut bytes, &resolve, world, StringEncoding::UTF8)
        .unwrap_or_else(|e| panic!("embed: {e:#}"));
    ComponentEncoder::default()
        .module(&bytes)
        .and_then(|encoder| encoder.validate(true).encode())
        .unwrap_or_else(|e| panic!("encode the component: {e:#}"))
}
