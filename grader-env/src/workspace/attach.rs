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
    /// `name` (hud's default is `shell`).
    ///
    /// It starts when the environment serves (before the port line; a workspace that cannot
    /// start, such as one that requires isolation where bwrap cannot sandbox, stops serving
    /// with its message), and stops, with every process in it, when serving stops. When a
    /// task ends (graded, cancelled, replaced, or its session said `bye`) the sandbox is
    /// discarded with every process the agent left in it, detached ones included: the next
    /// task's agent inherits nothing (the reference keeps them until the environment stops).
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
        let slot: Arc<Mutex<Option<Workspace>>> = Arc::new(Mutex::new(None));
        let name = name.to_owned();
        let (on_task_end, on_stop) = (Arc::clone(&slot), Arc::clone(&slot));
        self.initialize(move |capabilities| {
            let (slot, builder, name) = (Arc::clone(&slot), builder.clone(), name.clone());
            async move {
                let workspace = builder.start().await?;
                capabilities.add(workspace.capability_named(&name));
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
