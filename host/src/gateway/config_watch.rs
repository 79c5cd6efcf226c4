//! `serve` follows the config files: when the global store, the workspace file or the tool
//! pins (`.toolport/tools.lock`) change (an `mcp add` or `mcp approve` in another terminal, an
//! edit in an editor), the resolution is read again and the runtime reconciled, which connects
//! or closes only the servers concerned and checks every tool against the pins again. A file
//! that does not parse is reported and ignored: the surface stays what it was.
//!
//! The same watch follows the policy file (`policy_watch.rs`).
//!
//! The folders are watched, not the files: editors and toolport's own writer replace a file by
//! renaming a new one over it, which a watch on the old file would not see.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use anyhow::Context as _;
use notify::{RecursiveMode, Watcher as _};
use tokio::sync::mpsc;

use crate::config::load_resolved;
use crate::paths::Paths;
use crate::runtime::Runtime;

/// Edits arriving within this long of each other are applied once.
const SETTLE: Duration = Duration::from_millis(150);

/// Watches while held; dropping it stops the watching.
pub struct ConfigWatch {
    _watcher: Arc<Mutex<Folders>>,
}

/// The watcher and the folders it watches.
struct Folders {
    watcher: notify::RecommendedWatcher,
    watched: Vec<PathBuf>,
}

impl Folders {
    /// Watches the nearest existing folder of each file: a workspace without `.toolport/`
    /// yet is watched at its root, so the folder's creation is seen, and the folder itself
    /// once it exists.
    fn follow(&mut self, files: &[PathBuf]) -> anyhow::Result<()> {
        for file in files {
            let mut folder = file.parent().map(Path::to_path_buf);
            while let Some(f) = folder.clone().filter(|f| !f.is_dir()) {
                folder = f.parent().map(Path::to_path_buf);
            }
            if let Some(folder) = folder
                && !self.watched.contains(&folder)
            {
                self.watcher
                    .watch(&folder, RecursiveMode::NonRecursive)
                    .with_context(|| format!("cannot watch {}", folder.display()))?;
                self.watched.push(folder);
            }
        }
        Ok(())
    }
}

/// Starts watching `paths`' store and workspace file for `runtime`.
pub fn watch(runtime: Runtime, paths: Paths) -> anyhow::Result<ConfigWatch> {
    // The tool pins too: an `mcp approve` beside a running `serve` brings the tools back here.
    let files = vec![paths.store_file(), paths.workspace_file(), paths.tools_lock()];
    on_edits(files, move || {
        let runtime = runtime.clone();
        let paths = paths.clone();
        async move { reconcile(&runtime, &paths).await }
    })
}

/// Calls `apply` once per burst of edits of `files` (created, replaced, changed or removed)
/// while the returned handle is held.
pub fn on_edits<F, Fut>(files: Vec<PathBuf>, apply: F) -> anyhow::Result<ConfigWatch>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let wanted = files.clone();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && is_edit(&event, &wanted)
        {
            let _ = tx.send(());
        }
    })
    .context("cannot watch the config files")?;
    let mut folders = Folders { watcher, watched: Vec::new() };
    folders.follow(&files)?;
    let folders = Arc::new(Mutex::new(folders));
    tokio::spawn(settle_then(files, Arc::downgrade(&folders), rx, apply));
    Ok(ConfigWatch { _watcher: folders })
}

/// An event that changes one of `files` (or a folder on the way to one). Opening or reading a
/// file is none: serve reads these files itself on every reload, and following those events
/// kept it reloading every 150 ms for ever (44% of a core at 10,000 tools).
fn is_edit(event: &notify::Event, files: &[PathBuf]) -> bool {
    !matches!(event.kind, notify::EventKind::Access(_)) && event.paths.iter().any(|p| concerns(p, files))
}

/// An event about one of the files, or about a folder on the way to one (its creation).
fn concerns(path: &Path, files: &[PathBuf]) -> bool {
    files.iter().any(|file| file == path || file.starts_with(path))
}

/// Runs `apply` once per burst of edits, until the watch is dropped.
async fn settle_then<F, Fut>(
    files: Vec<PathBuf>,
    folders: Weak<Mutex<Folders>>,
    mut edits: mpsc::UnboundedReceiver<()>,
    mut apply: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    while edits.recv().await.is_some() {
        tokio::time::sleep(SETTLE).await;
        while edits.try_recv().is_ok() {}
        let Some(folders) = folders.upgrade() else { return };
        if let Err(e) =
            folders.lock().map_err(|_| anyhow::anyhow!("poisoned")).and_then(|mut f| f.follow(&files))
        {
            tracing::warn!("{e:#}");
        }
        apply().await;
    }
}

/// Reads the resolution again and reconciles the runtime with it, or says why not.
async fn reconcile(runtime: &Runtime, paths: &Paths) {
    match load_resolved(paths, &BTreeSet::new()) {
        Ok(resolved) => {
            if let Err(e) = runtime.reconcile(resolved).await {
                runtime
                    .observer()
                    .tell(format_args!("toolport serve: the changed configuration was not applied: {e}"));
            }
        }
        Err(e) => runtime
            .observer()
            .tell(format_args!("toolport serve: the changed configuration was not applied: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use notify::event::{AccessKind, AccessMode, CreateKind, DataChange, ModifyKind, RemoveKind};
    use notify::{Event, EventKind};

    use super::*;

    #[test]
    fn a_read_of_a_watched_file_is_no_edit_and_a_write_rename_or_removal_is() {
        let file = PathBuf::from("/home/me/.toolport/mcp.json");
        let files = [file.clone()];
        let on = |kind| Event::new(kind).add_path(file.clone());
        assert!(!is_edit(&on(EventKind::Access(AccessKind::Open(AccessMode::Read))), &files));
        assert!(!is_edit(&on(EventKind::Access(AccessKind::Close(AccessMode::Read))), &files));
        assert!(is_edit(&on(EventKind::Modify(ModifyKind::Data(DataChange::Content))), &files));
        assert!(is_edit(&on(EventKind::Create(CreateKind::File)), &files));
        assert!(is_edit(&on(EventKind::Remove(RemoveKind::File)), &files));
        let elsewhere = Event::new(EventKind::Create(CreateKind::File)).add_path(PathBuf::from("/tmp/x"));
        assert!(!is_edit(&elsewhere, &files));
    }
}
