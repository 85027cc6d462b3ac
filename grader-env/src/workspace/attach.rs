//! `Environment::workspace`: a [`Workspace`] started when the environment serves, published as
//! its `shell` capability, its sandbox discarded when each task ends and stopped with the
//! server. A template reaches it through its session (`Session::workspace`, a
//! [`WorkspaceHandle`]).

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Mutex;

use super::builder::WorkspaceBuilder;
use super::handle::WorkspaceHandle;
use super::server::Workspace;
use crate::environment::{SessionFuture, SessionHooks};
use crate::{Capability, Environment};

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
    /// and stops, with every process in it, when serving stops.
    ///
    /// Tasks are sealed from each other. Each control session's `hello` gives it a client
    /// key of its own in the capability's `client_key` (hud's runtime says `hello` once per
    /// rollout, and its `SSHClient` logs in with that key); a connection made with it runs
    /// commands only while that session's task holds the workspace. When the grade begins
    /// the workspace is [sealed](Workspace::seal): what the agent left running is stopped
    /// (but what the builder declares graded), every connection is closed and no session
    /// starts. When a task ends (graded, cancelled, replaced, or its session said `bye`) its
    /// session's key stops working, its connections are closed and the sandbox is discarded
    /// with every process the agent left in it, detached ones included: the next task's agent
    /// inherits nothing, and an agent of an earlier task reaches nothing of a later one (the
    /// reference keeps one key and one sandbox for the environment's life). A session that
    /// starts another task says `hello` again for a new key. Files in the root stay. One
    /// workspace serves the environment's tasks one at a time.
    ///
    /// A template reaches the workspace through its task's session:
    /// [`Session::workspace`](crate::Session::workspace) gives a [`WorkspaceHandle`], to grade
    /// inside the task's sandbox with [`WorkspaceHandle::bash`], and to prepare or read the
    /// root from the host with [`WorkspaceHandle::root`] (which never follows a link the
    /// agent planted).
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
        let on_stop = Arc::clone(&slot);
        let sessions = Arc::new(Sessions {
            slot: Arc::clone(&slot),
            name: name.to_owned(),
        });
        let name = name.to_owned();
        self.initialize(move |capabilities| {
            let (slot, builder, name) = (Arc::clone(&slot), builder.clone(), name.clone());
            async move {
                let workspace = builder.track_files_or_setting()?.start().await?;
                // Each control session logs in with the key its `hello` gave it.
                workspace.sessions_only();
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
        .session_hooks(sessions)
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

/// The workspace's part in each control session: a key of its own in the session's `hello`,
/// which reaches the sandbox while the session's task holds the workspace; the workspace
/// sealed when the grade begins; the key let go, its connections closed and the sandbox
/// discarded when the task ends.
struct Sessions {
    slot: Arc<Mutex<Option<Workspace>>>,
    name: String,
}

impl SessionHooks for Sessions {
    fn bindings<'a>(&'a self, session: &'a str) -> SessionFuture<'a, Vec<Capability>> {
        Box::pin(async move {
            let slot = self.slot.lock().await;
            let Some(workspace) = slot.as_ref() else {
                return Vec::new();
            };
            match workspace.session_capability(&self.name, session) {
                Ok(capability) => vec![capability],
                Err(error) => {
                    // Without a key of its own the session gets none: the published one
                    // logs nobody in.
                    tracing::error!(%error, "cannot make a session's workspace key");
                    Vec::new()
                }
            }
        })
    }

    fn task_started<'a>(&'a self, session: &'a str) -> SessionFuture<'a, ()> {
        Box::pin(async move {
            if let Some(workspace) = self.slot.lock().await.as_ref() {
                workspace.task_started(session).await;
            }
        })
    }

    fn grading<'a>(&'a self, _session: &'a str) -> SessionFuture<'a, ()> {
        Box::pin(async move {
            if let Some(workspace) = self.slot.lock().await.as_ref() {
                workspace.seal().await;
            }
        })
    }

    fn task_ended<'a>(&'a self, session: &'a str) -> SessionFuture<'a, ()> {
        Box::pin(async move {
            if let Some(workspace) = self.slot.lock().await.as_ref() {
                workspace.session_ended(session).await;
                workspace.discard_sandbox().await;
            }
        })
    }

    fn session_closed<'a>(&'a self, session: &'a str) -> SessionFuture<'a, ()> {
        Box::pin(async move {
            if let Some(workspace) = self.slot.lock().await.as_ref() {
                workspace.session_ended(session).await;
            }
        })
    }
}
