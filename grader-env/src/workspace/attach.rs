//! `Environment::workspace`: a [`Workspace`] started when the environment serves, published as
//! its `shell` capability, its sandbox discarded when each task ends and stopped with the
//! server; and how a template reaches it: `Session::workspace`, a [`WorkspaceHandle`].

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Mutex;

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
        self.workspaces.0.push((name.to_owned(), handle.clone()));
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

/// A template's handle on the workspace its environment attached
/// ([`workspace_with`](Environment::workspace_with)), from its task's
/// [`Session::workspace`](crate::Session::workspace): while the environment serves,
/// [`bash`](Self::bash) grades a command inside the workspace's sandbox, where the task's agent
/// works.
#[derive(Clone)]
pub struct WorkspaceHandle {
    slot: Arc<Mutex<Option<Workspace>>>,
}

/// The workspaces an environment attached, by capability name, in order: what its templates'
/// sessions reach.
#[derive(Clone, Debug, Default)]
pub(crate) struct Attached(Vec<(String, WorkspaceHandle)>);

impl Attached {
    /// The one workspace attached (`name` `None`), or the one published as `name`; the error
    /// says what there is, for the task `task`.
    pub(crate) fn get(
        &self,
        task: &str,
        name: Option<&str>,
    ) -> Result<WorkspaceHandle, super::WorkspaceError> {
        let names: Vec<&str> = self.0.iter().map(|(name, _)| name.as_str()).collect();
        let found = match name {
            Some(wanted) => self.0.iter().find(|(name, _)| name == wanted),
            None if self.0.len() == 1 => self.0.first(),
            None => None,
        };
        if let Some((_, handle)) = found {
            return Ok(handle.clone());
        }
        let message = match (name, names.as_slice()) {
            (_, []) => {
                "the environment attached no workspace (`Environment::workspace`)".to_owned()
            }
            (Some(wanted), _) => {
                format!("the environment attached no workspace named {wanted:?} (it has {names:?})")
            }
            (None, _) => format!(
                "the environment attached {} workspaces ({names:?}): name one with \
                 `Session::workspace_named`",
                names.len()
            ),
        };
        Err(super::WorkspaceError::NotAttached {
            task: task.to_owned(),
            message,
        })
    }
}

impl std::fmt::Debug for WorkspaceHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceHandle").finish_non_exhaustive()
    }
}

impl WorkspaceHandle {
    /// A handle on no workspace yet: the environment's serving puts one there.
    fn new() -> Self {
        WorkspaceHandle {
            slot: Arc::new(Mutex::new(None)),
        }
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
