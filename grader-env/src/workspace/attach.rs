//! `Environment::workspace`: a [`Workspace`] started when the environment serves, published as
//! its `shell` capability, its sandbox discarded when each task ends and stopped with the
//! server.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Mutex;

use super::server::{Workspace, WorkspaceBuilder};
use crate::Environment;

impl Environment {
    /// Attaches a workspace on `root` with the reference's defaults, as hud's
    /// `env.workspace(root)`; see [`workspace_with`](Self::workspace_with).
    #[must_use]
    pub fn workspace(self, root: impl Into<PathBuf>) -> Self {
        self.workspace_with(Workspace::builder(root), "shell")
    }

    /// Attaches a workspace built as `builder` says, published as the `ssh/2` capability
    /// `name` (hud's default is `shell`), and as the `filetracking/1` capability
    /// `filetracking` unless the builder says [`track_files(false)`](WorkspaceBuilder::track_files)
    /// or, when it says nothing, `HUD_FILE_TRACKING_ENABLED` is false (as the reference's
    /// `env.workspace`).
    ///
    /// It starts when the environment serves (before the port line; a workspace that cannot
    /// start, such as one that requires isolation where bwrap cannot sandbox, or a
    /// `HUD_FILE_TRACKING_ENABLED` that is not a boolean, stops serving with its message),
    /// and stops, with every process in it, when serving stops. When a task ends (graded,
    /// cancelled, replaced, or its session said `bye`) the sandbox is discarded with every
    /// process the agent left in it, detached ones included: the next task's agent inherits
    /// nothing (the reference keeps them until the environment stops).
    /// Files in the root stay. One workspace serves every task of the environment, as the
    /// reference's: tasks run at the same time share it.
    ///
    /// ```
    /// use grader_env::Environment;
    /// use grader_env::workspace::Workspace;
    ///
    /// let env = Environment::new("coding")
    ///     .workspace_with(Workspace::builder("/srv/checkout").network(false), "shell");
    /// assert!(env.capabilities().get("shell").is_none(), "published when it serves");
    /// ```
    #[must_use]
    pub fn workspace_with(self, builder: WorkspaceBuilder, name: &str) -> Self {
        self.workspace_shared(builder, name, &WorkspaceHandle::new())
    }

    /// As [`workspace_with`](Self::workspace_with), with a `handle` the templates keep to
    /// reach the workspace while it serves: to grade inside its sandbox with
    /// [`WorkspaceHandle::bash`].
    ///
    /// ```
    /// use grader_env::Environment;
    /// use grader_env::workspace::{Workspace, WorkspaceHandle};
    ///
    /// let handle = WorkspaceHandle::new();
    /// let env = Environment::new("coding").workspace_shared(
    ///     Workspace::builder("/srv/checkout"),
    ///     "shell",
    ///     &handle,
    /// );
    /// // A template's grading then runs `handle.bash("pytest -q").await?.grade(1.0)`.
    /// # drop(env);
    /// ```
    #[must_use]
    pub fn workspace_shared(
        self,
        builder: WorkspaceBuilder,
        name: &str,
        handle: &WorkspaceHandle,
    ) -> Self {
        let slot = Arc::clone(&handle.slot);
        let name = name.to_owned();
        let (on_task_end, on_stop) = (Arc::clone(&slot), Arc::clone(&slot));
        self.initialize(move |capabilities| {
            let (slot, builder, name) = (Arc::clone(&slot), builder.clone(), name.clone());
            async move {
                let workspace = builder.track_files_or_setting()?.start().await?;
                capabilities.add(workspace.capability_named(&name));
                if let Some(file_tracking) = workspace.file_tracking_capability() {
                    capabilities.add(file_tracking);
                }
                if let Some(old) = slot.lock().await.replace(workspace) {
                    old.stop().await;
                }
                Ok::<(), super::WorkspaceError>(())
            }
        })
        .teardown(move || {
            let slot = Arc::clone(&on_task_end);
            async move {
                if let Some(workspace) = slot.lock().await.as_ref() {
                    workspace.discard_sandbox().await;
                }
                Ok::<(), std::convert::Infallible>(())
            }
        })
        .shutdown(move || {
            let slot = Arc::clone(&on_stop);
            async move {
                let taken = slot.lock().await.take();
                if let Some(workspace) = taken {
                    workspace.stop().await;
                }
                Ok::<(), std::convert::Infallible>(())
            }
        })
    }
}

/// A handle on the workspace an [`Environment`] attached with
/// [`workspace_shared`](Environment::workspace_shared), for its templates: while the
/// environment serves, [`bash`](Self::bash) grades a command inside the workspace's sandbox.
#[derive(Clone, Default)]
pub struct WorkspaceHandle {
    slot: Arc<Mutex<Option<Workspace>>>,
}

impl std::fmt::Debug for WorkspaceHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceHandle").finish_non_exhaustive()
    }
}

impl WorkspaceHandle {
    /// A handle on no workspace yet: give it to
    /// [`workspace_shared`](Environment::workspace_shared).
    #[must_use]
    pub fn new() -> Self {
        WorkspaceHandle::default()
    }

    /// [`Workspace::bash`] on the running workspace: a `BashGrader` whose command runs in the
    /// task's sandbox, seeing what the agent left there.
    ///
    /// # Errors
    /// When the workspace is not running (before the environment serves, or after it
    /// stopped), or its sandbox cannot be started.
    pub async fn bash(
        &self,
        command: impl Into<String>,
    ) -> Result<grader_core::BashGrader, super::WorkspaceError> {
        match self.slot.lock().await.as_ref() {
            Some(workspace) => workspace.bash(command).await,
            None => Err(super::WorkspaceError::Sandbox(
                "the environment's workspace is not running (it starts when the environment \
                 serves)"
                    .to_owned(),
            )),
        }
    }
}
