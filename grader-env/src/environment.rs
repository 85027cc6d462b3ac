//! The environment: a name and version, its templates, its capabilities, and the hooks run
//! around serving (`initialize` before, `shutdown` after) and after each task (`teardown`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::capability::{Capabilities, Capability};
use crate::pyfmt::py_str_repr;
use crate::template::{IntoTemplate, Template};

type HookFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;
type InitHook = Arc<dyn Fn(Capabilities) -> HookFuture + Send + Sync>;
type Hook = Arc<dyn Fn() -> HookFuture + Send + Sync>;

/// A future of a [`SessionHooks`] call.
pub(crate) type SessionFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a part of the environment does at each step of a control session, for parts that are
/// per session (a workspace's key per session): `hello` (the session's own bindings, replacing
/// the published capabilities of the same names), a task started, its grade beginning, the
/// task ended, and the session's connection gone.
pub(crate) trait SessionHooks: Send + Sync {
    /// The capabilities `session` gets in its `hello` bindings instead of the published ones
    /// of the same names.
    fn bindings<'a>(&'a self, session: &'a str) -> SessionFuture<'a, Vec<Capability>>;
    /// `session` started a task (before its template runs).
    fn task_started<'a>(&'a self, session: &'a str) -> SessionFuture<'a, ()>;
    /// The grade of `session`'s task begins (before the template gets the answer).
    fn grading<'a>(&'a self, session: &'a str) -> SessionFuture<'a, ()>;
    /// `session`'s task ended: graded, cancelled, replaced or its session gone for good.
    fn task_ended<'a>(&'a self, session: &'a str) -> SessionFuture<'a, ()>;
    /// The connection speaking for `session` is gone, and it holds no task (nothing can
    /// resume it).
    fn session_closed<'a>(&'a self, session: &'a str) -> SessionFuture<'a, ()>;
}

/// Why an environment cannot be declared as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvironmentError {
    /// Two templates share an id. The message is the reference's.
    #[error("template {} already registered on env {}", py_str_repr(.id), py_str_repr(.env))]
    DuplicateTemplate {
        /// The environment.
        env: String,
        /// The id registered twice.
        id: String,
    },
    /// A capability without a URL. The message is the reference's.
    #[error(
        "capability {} has no url; start the service in an initialize hook and publish its concrete address",
        py_str_repr(.0)
    )]
    NoUrl(String),
}

/// Capabilities and task templates, served to the HUD runtime by [`serve`](Environment::serve);
/// and its state `S` (none by default), which templates that take a
/// [`State`](crate::State) receive (see [`with_state`](Environment::with_state)).
///
/// ```
/// use grader_env::{Environment, NoArgs, Session, Template};
///
/// let env = Environment::new("demo")
///     .version("1.2.0")
///     .template(Template::new("ping", |_: NoArgs, session: Session| async move {
///         let answer = session.prompt("Say pong.").await?;
///         Ok::<_, grader_env::PromptError>(answer == "pong")
///     }))?;
/// assert_eq!(env.name(), "demo");
/// assert_eq!(env.templates().len(), 1);
/// # Ok::<(), grader_env::EnvironmentError>(())
/// ```
#[derive(Clone)]
pub struct Environment<S = ()> {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) templates: Vec<Template>,
    pub(crate) capabilities: Capabilities,
    pub(crate) on_start: Vec<InitHook>,
    pub(crate) on_stop: Vec<Hook>,
    pub(crate) on_teardown: Vec<Hook>,
    pub(crate) on_session: Vec<Arc<dyn SessionHooks>>,
    /// The workspaces attached, by capability name, for the templates' sessions.
    #[cfg(feature = "workspace")]
    pub(crate) workspaces: crate::workspace::Attached,
    state: S,
}

impl<S> std::fmt::Debug for Environment<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("templates", &self.templates)
            .finish_non_exhaustive()
    }
}

impl Environment {
    /// An environment with this name, version `0.0.1` (the reference's default), no state and
    /// nothing else.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Environment {
            name: name.into(),
            version: "0.0.1".to_owned(),
            templates: Vec::new(),
            capabilities: Capabilities::default(),
            on_start: Vec::new(),
            on_stop: Vec::new(),
            on_teardown: Vec::new(),
            on_session: Vec::new(),
            #[cfg(feature = "workspace")]
            workspaces: crate::workspace::Attached::default(),
            state: (),
        }
    }
}

impl<S> Environment<S> {
    /// Gives the environment its state: what every task's template that takes a
    /// [`State<T>`](crate::State) receives (the state itself, or the part of it `T` names; see
    /// [`FromRef`](crate::FromRef)), cloned for each task. Call it before registering those
    /// templates: registering one binds it to the state, and one whose state the environment
    /// does not give does not compile. Templates registered before keep the state they were
    /// bound to.
    ///
    /// ```
    /// use grader_env::{Environment, Session, State, template};
    ///
    /// #[template]
    /// async fn greet(State(greeting): State<String>, session: Session) -> Result<f64, grader_env::PromptError> {
    ///     let answer = session.prompt(greeting).await?;
    ///     Ok(if answer == "hello" { 1.0 } else { 0.0 })
    /// }
    ///
    /// let env = Environment::new("greetings")
    ///     .with_state("Say hello.".to_owned())
    ///     .template(Greet::template())?;
    /// assert_eq!(env.state(), "Say hello.");
    /// # Ok::<(), grader_env::EnvironmentError>(())
    /// ```
    #[must_use]
    pub fn with_state<T>(self, state: T) -> Environment<T> {
        Environment {
            name: self.name,
            version: self.version,
            templates: self.templates,
            capabilities: self.capabilities,
            on_start: self.on_start,
            on_stop: self.on_stop,
            on_teardown: self.on_teardown,
            on_session: self.on_session,
            #[cfg(feature = "workspace")]
            workspaces: self.workspaces,
            state,
        }
    }

    /// The environment's state.
    #[must_use]
    pub fn state(&self) -> &S {
        &self.state
    }

    /// Sets the version `hello` reports.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// The environment's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Registers a template: a [`Template`], or a
    /// [`StatefulTemplate`](crate::StatefulTemplate) (a template that takes a
    /// [`State<T>`](crate::State)), bound here to the environment's state. A template whose
    /// state the environment does not give is a compile error.
    ///
    /// # Errors
    /// [`EnvironmentError::DuplicateTemplate`] when its id is taken.
    pub fn template(mut self, template: impl IntoTemplate<S>) -> Result<Self, EnvironmentError> {
        let template = template.into_template(&self.state);
        if self.templates.iter().any(|t| t.id() == template.id()) {
            return Err(EnvironmentError::DuplicateTemplate {
                env: self.name,
                id: template.id().to_owned(),
            });
        }
        self.templates.push(template);
        Ok(self)
    }

    /// The registered templates, in registration order.
    #[must_use]
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// Publishes a capability that already exists (one the environment starts itself is
    /// published from an [`initialize`](Self::initialize) hook).
    ///
    /// # Errors
    /// [`EnvironmentError::NoUrl`] when its URL is empty.
    pub fn capability(self, capability: Capability) -> Result<Self, EnvironmentError> {
        if capability.url.is_empty() {
            return Err(EnvironmentError::NoUrl(capability.name));
        }
        self.capabilities.add(capability);
        Ok(self)
    }

    /// The published capabilities (shared with the `initialize` hooks).
    #[must_use]
    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// Registers a hook run once before the control channel serves, in registration order;
    /// it may publish capabilities. A failing hook stops [`serve`](Self::serve) with its
    /// message.
    #[must_use]
    pub fn initialize<F, Fut, E>(mut self, hook: F) -> Self
    where
        F: Fn(Capabilities) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: std::fmt::Display,
    {
        self.on_start.push(Arc::new(move |caps| {
            let future = hook(caps);
            Box::pin(async move { future.await.map_err(|e| e.to_string()) })
        }));
        self
    }

    /// Registers a hook run when serving stops (hooks run in reverse registration order;
    /// a failure is logged and the others still run).
    #[must_use]
    pub fn shutdown<F, Fut, E>(mut self, hook: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: std::fmt::Display,
    {
        self.on_stop.push(wrap(hook));
        self
    }

    /// Registers a hook run whenever a task ends: after its grade, on `tasks.cancel` or
    /// `bye`, and when a new `tasks.start` replaces it (the reference's task teardown). A
    /// failure is logged and ignored.
    #[must_use]
    pub fn teardown<F, Fut, E>(mut self, hook: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: std::fmt::Display,
    {
        self.on_teardown.push(wrap(hook));
        self
    }

    /// Registers per-session hooks (a workspace's).
    #[cfg(feature = "workspace")]
    pub(crate) fn session_hooks(mut self, hooks: Arc<dyn SessionHooks>) -> Self {
        self.on_session.push(hooks);
        self
    }

    /// The `hello` bindings of `session`: the published capabilities, each replaced by the
    /// session's own of the same name where a part of the environment has one.
    pub(crate) async fn bindings(&self, session: &str) -> Vec<Capability> {
        let mut bindings = self.capabilities.list();
        for hooks in &self.on_session {
            for own in hooks.bindings(session).await {
                match bindings.iter_mut().find(|b| b.name == own.name) {
                    Some(published) => *published = own,
                    None => bindings.push(own),
                }
            }
        }
        bindings
    }

    pub(crate) async fn task_started(&self, session: &str) {
        for hooks in &self.on_session {
            hooks.task_started(session).await;
        }
    }

    pub(crate) async fn grading(&self, session: &str) {
        for hooks in &self.on_session {
            hooks.grading(session).await;
        }
    }

    pub(crate) async fn task_ended(&self, session: &str) {
        for hooks in &self.on_session {
            hooks.task_ended(session).await;
        }
    }

    pub(crate) async fn session_closed(&self, session: &str) {
        for hooks in &self.on_session {
            hooks.session_closed(session).await;
        }
    }

    pub(crate) async fn run_teardown(&self) {
        for hook in &self.on_teardown {
            if let Err(message) = hook().await {
                tracing::warn!(env = %self.name, %message, "task teardown hook failed");
            }
        }
    }

    pub(crate) async fn start(&self) -> Result<(), String> {
        for hook in &self.on_start {
            hook(self.capabilities.clone()).await?;
        }
        Ok(())
    }

    pub(crate) async fn stop(&self) {
        for hook in self.on_stop.iter().rev() {
            if let Err(message) = hook().await {
                tracing::warn!(env = %self.name, %message, "shutdown hook failed");
            }
        }
    }
}

fn wrap<F, Fut, E>(hook: F) -> Hook
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send + 'static,
    E: std::fmt::Display,
{
    Arc::new(move || {
        let future = hook();
        Box::pin(async move { future.await.map_err(|e| e.to_string()) })
    })
}
