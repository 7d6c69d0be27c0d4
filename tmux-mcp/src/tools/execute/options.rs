//! `set_option` and `set_environment`: tmux options and the environment
//! of processes started later.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::{OptionScope, SetEnvironment, SetOption, ShowOption};

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};

const SET_OPTION: &str = "Set or unset a tmux option of the server, a session, window or pane (target), or its global default (global=true). Examples: scope=window name=mode-keys value=vi; scope=session name=status value=off; scope=pane name=remain-on-exit value=on. Returns the value afterwards.";

/// Which options table `set_option` addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OptionScopeArg {
    /// Server options.
    Server,
    /// Session options.
    Session,
    /// Window options.
    Window,
    /// Pane options.
    Pane,
}

/// Arguments of `set_option`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetOptionArgs {
    /// The option's scope.
    pub scope: OptionScopeArg,
    /// The option, like history-limit or @my-option.
    pub name: String,
    /// The value (omit with unset=true).
    pub value: Option<String>,
    /// Unset it (it falls back to the global default).
    #[serde(default)]
    pub unset: bool,
    /// The session, window or pane; omit with global=true or scope=server.
    pub target: Option<String>,
    /// Set the global default instead.
    #[serde(default)]
    pub global: bool,
}

/// Result of `set_option`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SetOptionResult {
    /// The scope.
    pub scope: OptionScopeArg,
    /// The option.
    pub name: String,
    /// The id it was set on, if not global.
    pub target: Option<String>,
    /// Its value now (none if unset and without a default).
    pub value: Option<String>,
}

impl Summary for SetOptionResult {
    fn summary(&self) -> String {
        format!(
            "Option {} ({:?}{}) is now {}",
            self.name,
            self.scope,
            self.target
                .as_deref()
                .map(|t| format!(" on {t}"))
                .unwrap_or_else(|| " global".to_owned()),
            self.value
                .as_deref()
                .map_or_else(|| "unset".to_owned(), |v| format!("{v:?}"))
        )
    }
}

const SET_ENVIRONMENT: &str = "Set or unset a variable in tmux's environment, of one session (target) or global (global=true), for processes started later; running ones keep theirs (for one command, run `env NAME=value command`). Returns what changed.";

/// Arguments of `set_environment`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetEnvironmentArgs {
    /// The variable's name.
    pub name: String,
    /// Its value (omit with unset=true).
    pub value: Option<String>,
    /// Remove the variable instead.
    #[serde(default)]
    pub unset: bool,
    /// The session; omit with global=true.
    pub target: Option<String>,
    /// Change the global environment.
    #[serde(default)]
    pub global: bool,
}

/// Result of `set_environment`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SetEnvironmentResult {
    /// The variable.
    pub name: String,
    /// The session id, or "global".
    pub scope: String,
    /// true if set, false if unset.
    pub set: bool,
}

impl Summary for SetEnvironmentResult {
    fn summary(&self) -> String {
        format!(
            "{} {} in the {} environment (for processes started from now on)",
            if self.set { "Set" } else { "Unset" },
            self.name,
            self.scope
        )
    }
}

#[tool_router(router = options_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = SET_OPTION, annotations(title = "Set option", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true))]
    pub(crate) async fn set_option(
        &self,
        Parameters(args): Parameters<SetOptionArgs>,
    ) -> Result<Json<SetOptionResult>, ToolError> {
        let what = format!("Setting option {}", args.name);
        let scope = match args.scope {
            OptionScopeArg::Server => OptionScope::Server,
            OptionScopeArg::Session => OptionScope::Session,
            OptionScopeArg::Window => OptionScope::Window,
            OptionScopeArg::Pane => OptionScope::Pane,
        };
        if args.unset == args.value.is_some() {
            return Err(ToolError::new(
                what,
                "give either value or unset=true",
                "Add value, or set unset=true without value",
            ));
        }
        let conn = self.conn().await?;
        let target: Option<String> = match (&args.target, args.scope, args.global) {
            (_, OptionScopeArg::Server, _) | (None, _, true) => None,
            (Some(_), _, true) => {
                return Err(ToolError::new(
                    what,
                    "target and global=true exclude each other",
                    "Drop one of them",
                ));
            }
            (None, _, false) => {
                return Err(ToolError::new(
                    what,
                    "a session, window or pane option needs a target or global=true",
                    "Give target (an id) or global=true",
                ));
            }
            (Some(t), scope, false) => {
                let r = conn.resolve(t).await?;
                conn.refuse_home(&r, &what)?;
                Some(match scope {
                    OptionScopeArg::Session => r.session.to_string(),
                    OptionScopeArg::Window => r.window.to_string(),
                    _ => r.pane.to_string(),
                })
            }
        };
        let mut set = match &args.value {
            Some(v) => SetOption::new(scope, args.name.clone(), v),
            None => SetOption::unset(scope, args.name.clone()),
        };
        let mut show = ShowOption::new(scope, args.name.clone());
        if let Some(t) = &target {
            set = set.target(t.as_str());
            show = show.target(t.as_str());
        } else if args.scope != OptionScopeArg::Server {
            set = set.global();
            show = show.global();
        }
        conn.tmux
            .run(set)
            .await
            .map_err(|e| ToolError::tmux(what.clone(), &e))?;
        let value = conn
            .tmux
            .run(show)
            .await
            .ok()
            .flatten()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        Ok(Json(SetOptionResult {
            scope: args.scope,
            name: args.name,
            target,
            value,
        }))
    }

    #[tool(description = SET_ENVIRONMENT, annotations(title = "Set environment", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true))]
    pub(crate) async fn set_environment(
        &self,
        Parameters(args): Parameters<SetEnvironmentArgs>,
    ) -> Result<Json<SetEnvironmentResult>, ToolError> {
        let what = format!("Setting environment variable {}", args.name);
        if args.unset == args.value.is_some() {
            return Err(ToolError::new(
                what,
                "give either value or unset=true",
                "Add value, or set unset=true without value",
            ));
        }
        let conn = self.conn().await?;
        let mut cmd = match &args.value {
            Some(v) => SetEnvironment::set(args.name.clone(), v),
            None => SetEnvironment::remove(args.name.clone()),
        };
        let scope = match (&args.target, args.global) {
            (None, true) => {
                cmd = cmd.global();
                "global".to_owned()
            }
            (Some(t), false) => {
                let r = conn.resolve(t).await?;
                conn.refuse_home(&r, &what)?;
                cmd = cmd.target(r.session);
                r.session.to_string()
            }
            _ => {
                return Err(ToolError::new(
                    what,
                    "give exactly one of target (a session) and global=true",
                    "Fix the arguments",
                ));
            }
        };
        conn.tmux
            .run(cmd)
            .await
            .map_err(|e| ToolError::tmux(what, &e))?;
        Ok(Json(SetEnvironmentResult {
            name: args.name,
            scope,
            set: args.value.is_some(),
        }))
    }
}
