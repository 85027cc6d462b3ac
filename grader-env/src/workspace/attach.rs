//! `Environment::workspace`: a [`Workspace`] started when the environment serves, published as
//! its `shell` capability, its sandbox discarded when each task ends and stopped with the
//! server. A template reaches it through its session (`Session::workspace`, a
//! [`WorkspaceHandle`]).

use std::path::PathBuf;
use std::sync::Arc;

use super::handle::WorkspaceHandle;
use super::server::{Workspace, WorkspaceBuilder};
use crate::Environment;

impl<S> Environment<S> {
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
    /// A template reaches the workspace through its task's session:
    /// [`Session::workspace`](crate::Session::workspace) gives a [`WorkspaceHandle`], to grade
    /// inside the task's sandbox with [`WorkspaceHandle::bash`].
    ///
    /// ```
    /// use grader_env::{Environment, NoArgs, Session, Template};
    /// use grader_env::workspace::Workspace;
    ///
    /// let env = Environment::new("coding")
    ///     .workspace_with(Workspace::builder("/srv/checkout").network(false), "shell")
    ///     .template(Template::new("fix", |_: NoArgs, session: Session| async move {
    ///         session.prompt("Fix the test in /workspace.").await?;
    ///         let tests = session.workspace()?.bash("pytest -q").await?.grade(1.0).await?;
    ///         Ok::<_, Box<dyn std::error::Error + Send + Sync>>(tests)
    ///     }))?;
    /// assert!(env.capabilities().get("shell").is_none(), "published when it serves");
    /// # Ok::<(), grader_env::EnvironmentError>(())
    /// ```
    #[must_use]
    pub fn workspace_with(mut self, builder: WorkspaceBuilder, name: &str) -> Self {
        let handle = WorkspaceHandle::new();
        self.workspaces.push(name, handle.clone());
        let slot = handle.slot();
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
