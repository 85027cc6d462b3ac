//! [`WorkspaceHandle`]: how a template reaches the workspace its environment attached, through
//! its task's session (`Session::workspace`); and the environment's list of them by name.

use std::sync::Arc;

use tokio::sync::Mutex;

use super::error::WorkspaceError;
use super::root::{Root, RootError};
use super::server::Workspace;

/// A template's handle on the workspace its environment attached
/// ([`workspace_with`](crate::Environment::workspace_with)), from its task's
/// [`Session::workspace`](crate::Session::workspace): while the environment serves,
/// [`bash`](Self::bash) grades a command inside the workspace's sandbox, where the task's agent
/// works, and [`root`](Self::root) opens its root for host-side code that prepares or reads it.
#[derive(Clone)]
pub struct WorkspaceHandle {
    slot: Arc<Mutex<Option<Workspace>>>,
}

/// The workspaces an environment attached, by capability name, in order: what its templates'
/// sessions reach.
#[derive(Clone, Debug, Default)]
pub(crate) struct Attached(Vec<(String, WorkspaceHandle)>);

impl Attached {
    /// Adds the workspace published as `name`.
    pub(super) fn push(&mut self, name: &str, handle: WorkspaceHandle) {
        self.0.push((name.to_owned(), handle));
    }

    /// The one workspace attached (`name` `None`), or the one published as `name`; the error
    /// says what there is, for the task `task`.
    pub(crate) fn get(
        &self,
        task: &str,
        name: Option<&str>,
    ) -> Result<WorkspaceHandle, WorkspaceError> {
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
        Err(WorkspaceError::NotAttached {
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
    pub(super) fn new() -> Self {
        WorkspaceHandle {
            slot: Arc::new(Mutex::new(None)),
        }
    }

    /// Where the running workspace is kept, for the environment's hooks.
    pub(super) fn slot(&self) -> Arc<Mutex<Option<Workspace>>> {
        Arc::clone(&self.slot)
    }

    /// [`Workspace::root`] of the running workspace: the root for host-side code that
    /// prepares or reads it, never following a link the agent planted, what it creates owned
    /// by the sandbox's uid.
    ///
    /// # Errors
    /// When the workspace is not running, or its root cannot be opened.
    pub async fn root(&self) -> Result<Root, WorkspaceError> {
        match self.slot.lock().await.as_ref() {
            Some(workspace) => workspace
                .root()
                .map_err(|e: RootError| WorkspaceError::Root {
                    path: e.path,
                    source: e.source,
                }),
            None => Err(not_running()),
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
    ) -> Result<grader_core::BashGrader, WorkspaceError> {
        match self.slot.lock().await.as_ref() {
            Some(workspace) => workspace.bash(command).await,
            None => Err(not_running()),
        }
    }
}

fn not_running() -> WorkspaceError {
    WorkspaceError::Sandbox(
        "the environment's workspace is not running (it starts when the environment serves)"
            .to_owned(),
    )
}
