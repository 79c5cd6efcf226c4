//! Results too large for a model's context (`docs/src/configure/calls.md` "Large results"): a
//! content block that does not fit in what is left of the workspace's `maxResultTokens` is stored
//! whole in `<home>/results/` (`results_store.rs`) and replaced by its beginning and a note saying
//! where the rest is. Applied once, in the executor's call path, so `call`, the session's `/call`,
//! ACP and `serve` all get the same result.
//!
//! What counts is what a model reads: a text block's text, and any other block (an image's or
//! audio's base64, an embedded resource) as its JSON, all in one budget in content order.
//! `structuredContent` is left whole: it is for programs, checked against the tool's
//! `outputSchema`, and a cut would break it.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rmcp::model::{ContentBlock, MetaObject, Resource, TextContent};
use serde_json::{Map, Value, json};

use super::outcome::{CallError, CallOutcome, block_json, block_meta, block_type};
use crate::results_store::{ReadError, ResultsStore, Stored, StoredKind, URI_PREFIX};
use crate::tokens;

/// The `_meta` key of a note block that names a stored result (`uri`, `path`, `bytes`,
/// `mimeType`): what `call --json` readers and `serve`'s resource link are made from.
pub(crate) const STORED_META: &str = "toolport/storedResult";
/// Tokens kept back from a preview for its note (and `serve`'s resource link), so the bounded
/// result as a whole still fits in `maxResultTokens`: a second toolport in front passes it on
/// unchanged. Half of what is left when that is less than twice this (a bound too small for
/// a note still gets a preview).
const NOTE_RESERVE: usize = 200;
/// How the folder is named to the caller, in the note, its `_meta` and the errors: the
/// folder's absolute path says whose machine and which account (`/home/alice/…`), which is not
/// a client's business, and a client that wants the whole result has its URI. A person at
/// the CLI knows their home (`--home`, `$TOOLPORT_HOME`, `~/.toolport`).
const SHOWN_DIR: &str = "<home>/results";
/// How much of a stored result is tokenized to estimate its size (counting 30 MB would cost
/// seconds; the note says `~`).
const SAMPLE_BYTES: usize = 64 * 1024;

/// What one runtime bounds its results by.
#[derive(Debug, Clone)]
struct Bound {
    max_tokens: usize,
    store: ResultsStore,
}

/// Where large results go and how much of one is kept: the workspace's `maxResultTokens` and
/// `maxResultsFolderBytes`, and the results folder (`None`, as `RuntimeOptions::results_dir`
/// unset: an embedding host that bounds results itself).
pub(in crate::runtime) struct Limits {
    pub dir: Option<PathBuf>,
    pub max_tokens: usize,
    pub max_bytes: u64,
}

/// `outcome` within `limits.max_tokens`, the parts over it stored whole. With no results
/// folder every result passes on whole.
pub(in crate::runtime) async fn bounded(
    limits: Limits,
    tool: &str,
    server: &str,
    outcome: CallOutcome,
) -> Result<CallOutcome, CallError> {
    let Limits { dir, max_tokens, max_bytes } = limits;
    let Some(dir) = dir else { return Ok(outcome) };
    // A token is at least one byte: a result no longer in bytes than the budget fits, and
    // needs no tokenizer (whose first use costs a few hundred milliseconds).
    if outcome.content.iter().map(block_len).sum::<usize>() <= max_tokens {
        return Ok(outcome);
    }
    let bound = Bound { max_tokens, store: ResultsStore::new(dir, max_bytes) };
    // Tokenizing a budget's worth and writing megabytes: off the async threads.
    tokio::task::spawn_blocking(move || bound.apply(outcome)).await.map_err(|e| CallError::Protocol {
        tool: tool.to_string(),
        server: server.to_string(),
        message: format!("cannot bound the result: {e}"),
    })
}

impl Bound {
    fn apply(&self, outcome: CallOutcome) -> CallOutcome {
        let mut left = self.max_tokens;
        let mut content = Vec::with_capacity(outcome.content.len() + 1);
        for block in outcome.content {
            let (text, kind) = match block.as_text() {
                Some(text) => (Cow::Borrowed(text.text.as_str()), StoredKind::Text),
                None => (Cow::Owned(block_json(&block)), StoredKind::Json),
            };
            let Some(fits) = tokens::within(&text, left) else {
                left = left.saturating_sub(tokens::count(&text));
                content.push(block);
                continue;
            };
            let keep = left - NOTE_RESERVE.min(left / 2);
            left = 0;
            // A prefix of base64 or of a JSON object tells a model nothing: only text is previewed.
            if let Some(whole) = block.as_text() {
                // Cut from what fits, not from the whole text: the tokenizer reads a budget's
                // worth once.
                let preview = tokens::within(fits, keep).unwrap_or(fits);
                if !preview.is_empty() {
                    // The block's `_meta` and annotations kept, its text cut.
                    let mut cut = whole.clone();
                    cut.text = preview.to_string();
                    content.push(ContentBlock::Text(cut));
                }
            }
            let what = block_type(&block);
            content.push(match self.store.put(text.as_bytes(), kind) {
                Ok(stored) => note(&stored, what, estimate(&text)),
                Err(e) => {
                    // The operator's log keeps the real path; the caller gets the shown one.
                    tracing::warn!("cannot store a large result: {e:#}");
                    unstored_note(&text, what, kind, &shown(&format!("{e:#}"), self.store.dir()))
                }
            });
        }
        CallOutcome { content, ..outcome }
    }
}

/// What [`Bound::apply`] measures, in bytes.
fn block_len(block: &ContentBlock) -> usize {
    block.as_text().map_or_else(|| block_json(block).len(), |text| text.text.len())
}

/// `[result truncated: 31457280 bytes, ~6990507 tokens; the whole result is stored at
/// <home>/results/<id>.txt (toolport://results/<id>)]`, or for a block that is not text
/// `[image block left out: …; the whole block is stored at …]`; the stored result's place also
/// in `_meta`. The file is named under [`SHOWN_DIR`], never by its absolute path.
fn note(stored: &Stored, what: &str, tokens: usize) -> ContentBlock {
    let whole = if stored.kind == StoredKind::Text { "result" } else { "block" };
    let size = format!("{} bytes, ~{tokens} tokens", stored.bytes);
    let file = stored.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let path = format!("{SHOWN_DIR}/{file}");
    let place = format!("the whole {whole} is stored at {path} ({})", stored.uri());
    let meta = json!({
        "uri": stored.uri(),
        "path": path,
        "bytes": stored.bytes,
        "mimeType": stored.kind.mime_type(),
    });
    let mut named = Map::new();
    named.insert(STORED_META.to_string(), meta);
    ContentBlock::Text(
        TextContent::new(cut_text(stored.kind, what, &size, &place)).with_meta(MetaObject(named)),
    )
}

/// `text` (an error about the folder `dir`) with `dir` named as [`SHOWN_DIR`]: what the
/// caller may read of an error. The store's errors, and the `tempfile` and OS errors inside
/// them, quote the absolute path.
fn shown(text: &str, dir: &Path) -> String {
    let dir = dir.display().to_string();
    if dir.is_empty() { text.to_string() } else { text.replace(&dir, SHOWN_DIR) }
}

/// The note when the folder could not take the result: the cut is still said, and `why`
/// (already [`shown`]).
fn unstored_note(text: &str, what: &str, kind: StoredKind, why: &str) -> ContentBlock {
    let size = format!("{} bytes, ~{} tokens", text.len(), estimate(text));
    let why = format!("it could not be stored: {}", crate::text::escape_line(why));
    ContentBlock::text(cut_text(kind, what, &size, &why))
}

/// `[result truncated: <size>; <rest>]` for a text block, `[<what> block left out: <size>;
/// <rest>]` for any other: the one wording of both notes.
fn cut_text(kind: StoredKind, what: &str, size: &str, rest: &str) -> String {
    match kind {
        StoredKind::Text => format!("[result truncated: {size}; {rest}]"),
        StoredKind::Json => format!("[{what} block left out: {size}; {rest}]"),
    }
}

/// `text`'s tokens: counted when short, else scaled from its first [`SAMPLE_BYTES`].
fn estimate(text: &str) -> usize {
    if text.len() <= SAMPLE_BYTES {
        return tokens::count(text);
    }
    let end = crate::text::floor_char_boundary(text, SAMPLE_BYTES);
    let sampled = tokens::count(&text[..end]).max(1);
    ((text.len() as f64) * (sampled as f64) / (end as f64)).round() as usize
}

impl CallOutcome {
    /// The content with a `resource_link` block after every note of a stored result: how
    /// `serve` hands a client the way to the whole result (`resources/read` of the link).
    pub(crate) fn with_result_links(self) -> Self {
        let mut content = Vec::with_capacity(self.content.len() + 1);
        for block in self.content {
            let link = block_meta(&block).and_then(|m| m.get(STORED_META)).map(link);
            content.push(block);
            content.extend(link);
        }
        Self { content, ..self }
    }
}

/// The `resource_link` to the stored result a note's `_meta` names.
fn link(meta: &Value) -> ContentBlock {
    let uri = meta.get("uri").and_then(Value::as_str).unwrap_or_default();
    let name = format!("result-{}", uri.trim_start_matches(URI_PREFIX));
    let mime_type = meta.get("mimeType").and_then(Value::as_str).unwrap_or("text/plain");
    let link = Resource::new(uri, name)
        .with_description("The whole result, as the server sent it")
        .with_mime_type(mime_type);
    let link = match meta.get("bytes").and_then(Value::as_u64) {
        Some(bytes) => link.with_size(bytes),
        None => link,
    };
    ContentBlock::ResourceLink(link)
}

/// What `resources/read` of a stored result answers: its text and MIME type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredText {
    /// The stored bytes (a text result exactly as the server sent it).
    pub text: String,
    /// `text/plain` or `application/json`.
    pub mime_type: &'static str,
}

/// The stored result `uri` names, or `None` when `uri` is not a `toolport://results/` URI.
pub(in crate::runtime) async fn read(dir: Option<PathBuf>, uri: &str) -> Option<Result<StoredText, String>> {
    let id = uri.strip_prefix(URI_PREFIX)?.to_string();
    let Some(dir) = dir else {
        return Some(Err(format!("this host keeps no stored results: {}", crate::text::escape_line(uri))));
    };
    // The bound matters only to writes.
    let store = ResultsStore::new(dir.clone(), u64::MAX);
    let read = tokio::task::spawn_blocking(move || store.read(&id)).await;
    Some(match read {
        Ok(Ok((text, kind))) => Ok(StoredText { text, mime_type: kind.mime_type() }),
        Ok(Err(e @ ReadError::BadId(_))) => Err(crate::text::escape_line(&e.to_string()).into_owned()),
        // The id was checked (hex only); the folder is named as the caller knows it.
        Ok(Err(e)) => Err(shown(&e.to_string(), &dir)),
        Err(e) => Err(format!("cannot read the stored result: {e}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(dir: &std::path::Path, max_tokens: usize) -> Bound {
        Bound { max_tokens, store: ResultsStore::new(dir, u64::MAX) }
    }

    /// An outcome of the blocks `content` spells in JSON.
    fn outcome(content: Vec<Value>) -> CallOutcome {
        let content = serde_json::from_value(Value::Array(content)).unwrap_or_else(|e| panic!("{e}"));
        CallOutcome { content, structured: Some(json!({"kept": true})), is_error: false, meta: None }
    }

    /// The blocks of `outcome` as JSON, as a client reads them.
    fn blocks(outcome: &CallOutcome) -> Vec<Value> {
        outcome.content.iter().map(|b| serde_json::to_value(b).unwrap_or_else(|e| panic!("{e}"))).collect()
    }

    #[test]
    fn a_result_within_the_budget_is_unchanged() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let small = outcome(vec![
            json!({"type": "text", "text": "hello world"}),
            json!({"type": "text", "text": "again"}),
        ]);
        assert_eq!(bound(tmp.path(), 10).apply(small.clone()), small);
        assert!(std::fs::read_dir(tmp.path())?.next().is_none(), "nothing is stored");
        Ok(())
    }

    #[test]
    fn an_oversized_text_is_stored_whole_and_previewed() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let text = "line of text number one, and so on\n".repeat(2000);
        let annotated = json!({"type": "text", "text": text, "annotations": {"priority": 1.0}});
        let result = bound(tmp.path(), 300).apply(outcome(vec![annotated]));
        assert_eq!(result.structured, Some(json!({"kept": true})));
        let content = blocks(&result);
        assert_eq!(content.len(), 2, "{content:?}");
        let preview = content[0]["text"].as_str().unwrap_or_default();
        assert!(text.starts_with(preview) && !preview.is_empty());
        assert!(
            tokens::count(preview) <= 150,
            "the note's reserve (half of a small budget) comes off the preview"
        );
        assert_eq!(content[0]["annotations"], json!({"priority": 1.0}));
        let meta = &content[1]["_meta"][STORED_META];
        let uri = meta["uri"].as_str().unwrap_or_default();
        let shown_path = format!("<home>/results/{}.txt", uri.trim_start_matches(URI_PREFIX));
        assert_eq!(meta["path"], shown_path.as_str());
        let path = tmp.path().join(format!("{}.txt", uri.trim_start_matches(URI_PREFIX)));
        assert_eq!(std::fs::read(&path)?, text.as_bytes());
        let note = content[1]["text"].as_str().unwrap_or_default();
        let expected = format!(
            "[result truncated: {} bytes, ~{} tokens; the whole result is stored at {shown_path} ({uri})]",
            text.len(),
            estimate(&text),
        );
        assert_eq!(note, expected);
        let all: String = result.render_text();
        assert!(tokens::count(&all) <= 300, "the bounded result fits its bound");
        Ok(())
    }

    #[test]
    fn a_result_the_folder_cannot_take_still_says_it_was_cut_and_why() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        // The results folder would be inside a regular file: it cannot be created.
        let blocker = tmp.path().join("file");
        std::fs::write(&blocker, "x")?;
        let text = "word ".repeat(400);
        let result =
            bound(&blocker.join("results"), 50).apply(outcome(vec![json!({"type": "text", "text": text})]));
        let content = blocks(&result);
        assert_eq!(content.len(), 2, "{content:?}");
        let note = content[1]["text"].as_str().unwrap_or_default();
        let start = format!(
            "[result truncated: 2000 bytes, ~{} tokens; it could not be stored: cannot create <home>/results: ",
            estimate(&text)
        );
        assert!(note.starts_with(&start) && note.ends_with(']'), "{note}");
        let tmp_path = tmp.path().display().to_string();
        assert!(!note.contains(&tmp_path), "the folder's absolute path reached the caller: {note}");
        assert!(content[1].get("_meta").is_none(), "no stored result is named");
        Ok(())
    }

    #[test]
    fn a_large_image_is_stored_as_json_and_left_out() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let image = json!({"type": "image", "data": "QUFB".repeat(5000), "mimeType": "image/png"});
        let result = bound(tmp.path(), 500)
            .apply(outcome(vec![json!({"type": "text", "text": "see:"}), image.clone()]));
        let content = blocks(&result);
        assert_eq!(content[0], json!({"type": "text", "text": "see:"}));
        assert_eq!(content.len(), 2);
        let note = content[1]["text"].as_str().unwrap_or_default();
        assert!(note.starts_with("[image block left out: 20049 bytes, ~"), "{note}");
        assert!(note.contains(" tokens; the whole block is stored at "), "{note}");
        let meta = &content[1]["_meta"][STORED_META];
        assert_eq!(meta["mimeType"], "application/json");
        let file = meta["path"].as_str().unwrap_or_default().trim_start_matches("<home>/results/");
        let stored: Value = serde_json::from_slice(&std::fs::read(tmp.path().join(file))?)?;
        assert_eq!(stored, image);
        Ok(())
    }

    #[test]
    fn serve_gets_a_link_after_each_note() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let text = "abc def ".repeat(5000);
        let result = bound(tmp.path(), 250).apply(outcome(vec![json!({"type": "text", "text": text})]));
        let uri = blocks(&result)[1]["_meta"][STORED_META]["uri"].as_str().unwrap_or_default().to_string();
        let linked = result.clone().with_result_links();
        assert_eq!(linked.content.len(), 3);
        assert_eq!(linked.content[..2], result.content[..]);
        let id = uri.trim_start_matches(URI_PREFIX);
        assert_eq!(
            blocks(&linked)[2],
            json!({"type": "resource_link", "uri": uri, "name": format!("result-{id}"),
                   "description": "The whole result, as the server sent it",
                   "mimeType": "text/plain", "size": text.len()})
        );
        Ok(())
    }
}
