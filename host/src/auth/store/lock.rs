//! The file's one lock, for every write and for a refresh across processes: while this
//! process's refresh guard holds it, writes edit under that lock instead of waiting for
//! themselves; file work runs off the async threads.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rmcp::transport::auth::AuthError;

use super::format::Doc;
use crate::config::{EditError, FileLock, LockAt, Perms};

/// The lock of the refresh guard alive in this process, if any, shared by every clone of a
/// [`CredentialsFile`](super::CredentialsFile). A `Weak`, so dropping the guard releases the
/// lock; writes upgrade it and edit through it. `flock` locks belong to an open file: taking a
/// second one here would wait for ourselves.
#[derive(Clone, Default)]
pub(super) struct HeldLock(Arc<Mutex<Weak<FileLock>>>);

impl HeldLock {
    /// Runs `edit` on the file at `path` under its lock: the held one while this process's
    /// refresh guard lives, else a lock of its own.
    pub(super) fn edit<T>(
        &self,
        path: &Path,
        edit: impl FnOnce(&mut Doc) -> Result<T, EditError>,
    ) -> Result<T, EditError> {
        let held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lock) = held.upgrade() {
            // The slot stays locked for the edit, so two tasks writing under the same guard
            // cannot interleave their read-modify-writes.
            return lock.edit_doc(Perms::OwnerOnly, edit);
        }
        // Not held across the wait: the guard being taken now has to fill the slot.
        drop(held);
        FileLock::acquire(path, LockAt::Beside)?.edit_doc(Perms::OwnerOnly, edit)
    }

    /// Takes the exclusive lock of the file at `path` for a refresh guard and puts it in the
    /// slot every clone of the file writes through until the guard is dropped.
    pub(super) fn hold(&self, path: &Path) -> Result<Arc<FileLock>, EditError> {
        let lock = Arc::new(FileLock::acquire(path, LockAt::Beside)?);
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Arc::downgrade(&lock);
        Ok(lock)
    }
}

/// Runs file work off the async threads: a lock may be held by another process's refresh.
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, EditError> + Send + 'static,
) -> Result<T, AuthError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result.map_err(|e| AuthError::CredentialStoreError(e.to_string())),
        Err(e) => Err(AuthError::CredentialStoreError(format!("the credential store's task failed: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use rmcp::transport::auth::{
        AuthorizationManager, AuthorizationMetadata, CredentialStore as _, OAuthClientConfig,
        OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRequest,
    };
    use serde_json::json;

    use super::super::CredentialsFile;
    use super::super::test_support::{ISSUER_A, PATIENCE, SETTLE, URL, creds, file_json, refresh_token_of};
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_refresh_guard_holds_off_another_process_but_not_its_own_save() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("credentials.json");
        let ours = CredentialsFile::new(path.clone()).for_server(URL);
        // Another process: its own slot, its own lock file descriptor.
        let theirs = CredentialsFile::new(path.clone()).for_server(URL);
        ours.save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await?;

        let guard = ours.acquire_refresh_guard().await?;
        assert!(guard.is_some());
        tokio::time::timeout(PATIENCE, ours.save(creds("client-1", Some(ISSUER_A), "a1", "r1")?))
            .await
            .map_err(|_| anyhow::anyhow!("save under our own guard deadlocked"))??;

        let waiter = tokio::spawn(async move {
            let guard = theirs.acquire_refresh_guard().await?;
            let loaded = theirs.load().await?;
            drop(guard);
            Ok::<_, AuthError>(loaded)
        });
        tokio::time::sleep(SETTLE).await;
        assert!(!waiter.is_finished(), "the other process got the guard while ours was held");
        drop(guard);
        let loaded = tokio::time::timeout(PATIENCE, waiter).await???;
        let loaded = loaded.ok_or_else(|| anyhow::anyhow!("nothing loaded"))?;
        assert_eq!(refresh_token_of(&loaded)?, "r1", "it sees the token saved under our guard");
        Ok(())
    }

    /// A token endpoint that rotates refresh tokens as strict providers do: each one works
    /// once, a spent one is `invalid_grant`. The answer takes [`SETTLE`], so a second refresh
    /// arrives while the first is under way.
    struct RotatingProvider {
        /// The refresh token that works now, and how many were issued.
        valid: Mutex<(String, u32)>,
        /// Every refresh token presented, in order.
        presented: Mutex<Vec<String>>,
    }

    impl OAuthHttpClient for RotatingProvider {
        fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
            Box::pin(async move {
                let presented = url::form_urlencoded::parse(request.request.body())
                    .find(|(k, _)| k == "refresh_token")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                self.presented.lock().unwrap_or_else(PoisonError::into_inner).push(presented.clone());
                let issued = {
                    let mut valid = self.valid.lock().unwrap_or_else(PoisonError::into_inner);
                    (valid.0 == presented).then(|| {
                        valid.1 += 1;
                        valid.0 = format!("r{}", valid.1);
                        valid.1
                    })
                };
                tokio::time::sleep(SETTLE).await;
                let (status, body) = match issued {
                    Some(n) => (
                        200,
                        json!({"access_token": format!("a{n}"), "token_type": "bearer",
                        "expires_in": 3600, "refresh_token": format!("r{n}")}),
                    ),
                    None => (400, json!({"error": "invalid_grant"})),
                };
                Ok::<_, OAuthHttpClientError>(
                    http::Response::builder()
                        .status(status)
                        .header("content-type", "application/json")
                        .body(serde_json::to_vec(&body)?)?,
                )
            })
        }
    }

    async fn manager(
        file: &CredentialsFile,
        provider: Arc<RotatingProvider>,
    ) -> anyhow::Result<AuthorizationManager> {
        let mut manager = AuthorizationManager::new_with_oauth_http_client(URL, provider).await?;
        let mut metadata = AuthorizationMetadata::default();
        metadata.authorization_endpoint = format!("{ISSUER_A}/authorize");
        metadata.token_endpoint = format!("{ISSUER_A}/token");
        metadata.issuer = Some(ISSUER_A.into());
        manager.set_metadata(metadata);
        manager.configure_client(OAuthClientConfig::new("client-1", "http://127.0.0.1:8765/callback"))?;
        manager.set_credential_store(file.for_server(URL));
        Ok(manager)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_processes_refreshing_at_once_both_stay_signed_in() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("credentials.json");
        let (one, two) = (CredentialsFile::new(path.clone()), CredentialsFile::new(path.clone()));
        one.for_server(URL).save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await?;
        let provider = Arc::new(RotatingProvider {
            valid: Mutex::new(("r0".into(), 0)),
            presented: Mutex::new(Vec::new()),
        });
        let (first, second) =
            (manager(&one, provider.clone()).await?, manager(&two, provider.clone()).await?);

        let outcome = tokio::time::timeout(PATIENCE, async {
            let first = tokio::spawn(async move { first.refresh_token().await });
            // The second starts while the first is at the token endpoint, holding the lock.
            while provider.presented.lock().unwrap_or_else(PoisonError::into_inner).is_empty() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let second = tokio::spawn(async move { second.refresh_token().await });
            Ok::<_, anyhow::Error>((first.await??, second.await??))
        })
        .await
        .map_err(|_| anyhow::anyhow!("the refreshes deadlocked"))??;

        assert_eq!(serde_json::to_value(&outcome.0)?["access_token"], "a1");
        assert_eq!(serde_json::to_value(&outcome.1)?["access_token"], "a2");
        assert_eq!(
            *provider.presented.lock().unwrap_or_else(PoisonError::into_inner),
            ["r0", "r1"],
            "the second refresh used the rotated token, not the spent one"
        );
        let v = file_json(&path)?;
        assert_eq!(v["servers"][URL]["issuers"][ISSUER_A]["token"]["refresh_token"], "r2");
        assert_eq!(one.status(URL)?.map(|s| s.has_refresh_token), Some(true));
        Ok(())
    }
}
