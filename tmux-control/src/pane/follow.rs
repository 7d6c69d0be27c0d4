//! [`Tmux::follow`] and the follower each connection gets when it is made
//! (the [`Tmux`] handle holds it; an observer holds its own).
//!
//! tmux sends a pane's output only to the control clients attached to a
//! session that contains it. A pane of the connection's own session is
//! routed on that connection; for a pane of another session the follower
//! attaches an observer client to that session (with `ignore-size`, so it
//! never changes a window's size) and routes the pane there. Each
//! connection's follower also sets up the state subscriptions for its
//! session and watches its notifications: layout changes (the window a
//! pane is in, resizes), closed windows (a followed pane gone), and the
//! subscription values.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::OnceCell;

use super::log::{CloseHandler, PaneLog};
use super::state;
use super::{PaneOutput, Tmux};
use crate::command::ListPanes;
use crate::connection::{Connection, PaneSink, Watcher, WeakConnection};
use crate::error::{Closed, Error, Result};
use crate::ids::{PaneId, SessionId, WindowId};
use crate::proto::{Notification, layout_pane_sizes};

/// What the api keeps per connection: made with the connection, held by
/// its [`Tmux`] handle (or its [`Observer`]), and registered as the
/// connection's watcher.
pub(super) struct Follower {
    me: Weak<Follower>,
    conn: WeakConnection,
    pane_log: usize,
    /// The panes followed through this connection.
    logs: Mutex<HashMap<PaneId, Weak<PaneLog>>>,
    /// With [`ConnectOptions::keep_followed`]: the followed panes, kept
    /// until they end.
    ///
    /// [`ConnectOptions::keep_followed`]: crate::ConnectOptions::keep_followed
    kept: Option<Mutex<HashMap<PaneId, Arc<PaneLog>>>>,
    /// Serializes registrations, so a second `follow` of a pane returns
    /// only once the pane's route exists.
    registering: tokio::sync::Mutex<()>,
    /// Observer connections for panes of other sessions.
    observers: tokio::sync::Mutex<HashMap<SessionId, Observer>>,
    /// The state subscriptions, set up once.
    subscribed: OnceCell<()>,
}

/// A client attached to another session only to receive its panes'
/// output (with `ignore-size`), and the follower of its panes.
#[derive(Clone)]
struct Observer {
    conn: Connection,
    follower: Arc<Follower>,
}

impl Follower {
    /// The follower of `conn`, registered as its watcher.
    pub(super) fn new(conn: &Connection) -> Arc<Follower> {
        let follower = Arc::new_cyclic(|me| Follower {
            me: me.clone(),
            conn: conn.downgrade(),
            pane_log: conn.options().pane_log_bytes(),
            logs: Mutex::new(HashMap::new()),
            kept: conn
                .options()
                .keeps_followed()
                .then(|| Mutex::new(HashMap::new())),
            registering: tokio::sync::Mutex::new(()),
            observers: tokio::sync::Mutex::new(HashMap::new()),
            subscribed: OnceCell::new(),
        });
        let weak: Weak<Follower> = Arc::downgrade(&follower);
        conn.watch(weak);
        follower
    }

    fn logs(&self) -> std::sync::MutexGuard<'_, HashMap<PaneId, Weak<PaneLog>>> {
        self.logs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, pane: PaneId) -> Option<Arc<PaneLog>> {
        self.logs().get(&pane).and_then(Weak::upgrade)
    }

    fn all(&self) -> Vec<Arc<PaneLog>> {
        if let Some(kept) = &self.kept {
            kept.lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|_, log| !log.is_ended());
        }
        let mut logs = self.logs();
        logs.retain(|_, w| w.strong_count() > 0);
        logs.values().filter_map(Weak::upgrade).collect()
    }

    /// The observer of `session`, a sibling of this follower's
    /// connection `tmux`: the one already attached, or a new one.
    async fn observer(&self, tmux: &Connection, session: SessionId) -> Result<Observer> {
        let mut observers = self.observers.lock().await;
        if let Some(o) = observers.get(&session)
            && !o.conn.is_closed()
        {
            return Ok(o.clone());
        }
        let conn = tmux
            .connect_sibling(tmux.options().observer_of(session))
            .await?;
        tracing::debug!(%session, "observer client attached, to follow panes of that session");
        let o = Observer {
            follower: Follower::new(&conn),
            conn,
        };
        observers.insert(session, o.clone());
        Ok(o)
    }

    /// The followers of this connection's observers.
    async fn observer_followers(&self) -> Vec<Arc<Follower>> {
        let observers = self.observers.lock().await;
        observers.values().map(|o| o.follower.clone()).collect()
    }

    /// The log of `pane`, routed on this follower's connection `tmux`.
    async fn log(&self, tmux: &Connection, pane: PaneId, window: WindowId) -> Result<Arc<PaneLog>> {
        self.subscribed
            .get_or_try_init(|| async {
                for command in state::subscriptions()? {
                    tmux.run(command).await?;
                }
                Ok::<(), Error>(())
            })
            .await?;
        let _one_at_a_time = self.registering.lock().await;
        if let Some(log) = self.get(pane) {
            return Ok(log);
        }
        let log = PaneLog::new(pane, self.pane_log, Some(window));
        let sink: Weak<dyn PaneSink> = Arc::downgrade(&log) as Weak<dyn PaneSink>;
        tmux.route(pane, sink).await?;
        self.logs().insert(pane, Arc::downgrade(&log));
        if let Some(kept) = &self.kept {
            let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.retain(|_, log| !log.is_ended());
            kept.insert(pane, log.clone());
        }
        Ok(log)
    }

    /// Ends the logs of followed panes that tmux no longer lists.
    fn check_panes(&self) {
        let (Some(me), Some(tmux)) = (self.me.upgrade(), self.conn.upgrade()) else {
            return;
        };
        tokio::spawn(async move {
            let Ok(rows) = tmux.run(ListPanes::all()).await else {
                return;
            };
            for log in me.all() {
                if !rows.iter().any(|r| r.id == log.pane()) && !log.is_ended() {
                    log.end(super::PaneEnd::Gone);
                }
            }
        });
    }

    /// Seeds `log`'s emulator again from tmux, in the background (it lost
    /// sync when the pane grew).
    #[cfg(feature = "emulator")]
    fn reseed(&self, log: &Arc<PaneLog>) {
        let (Some(tmux), log) = (self.conn.upgrade(), Arc::clone(log)) else {
            return;
        };
        tokio::spawn(async move {
            // Out of sync until then: readers ask tmux, and may seed it too.
            let _ = super::emulated::seed(&log, &tmux).await;
        });
    }

    /// tmux 3.3a sometimes misses the SIGCHLD of a pane's program: the pane
    /// is dead but its status never arrives until another child of the
    /// server exits. A trivial background job makes tmux reap (and so
    /// report) it.
    fn nudge_reaping(&self) {
        let Some(tmux) = self.conn.upgrade() else {
            return;
        };
        tokio::spawn(async move {
            // Written by hand: `Raw` refuses `run-shell`, whose output would
            // arrive outside any reply; in the background `true` prints
            // nothing and the reply comes at once.
            let _ = tmux.raw_line("run-shell -b true").await;
        });
    }
}

impl CloseHandler for Follower {
    /// An observer connection carrying `log` closed: the pane is gone if
    /// tmux no longer lists it (its session was killed, or ended with its
    /// last window), and the closed observer is dropped.
    fn connection_closed(&self, log: Arc<PaneLog>, why: Arc<Closed>) {
        let (Some(tmux), me) = (self.conn.upgrade(), self.me.clone()) else {
            log.end(super::PaneEnd::ConnectionClosed(why));
            return;
        };
        tokio::spawn(async move {
            let gone = match tmux.run(ListPanes::all()).await {
                Ok(rows) => !rows.iter().any(|r| r.id == log.pane()),
                Err(_) => false,
            };
            log.end(if gone {
                super::PaneEnd::Gone
            } else {
                super::PaneEnd::ConnectionClosed(why)
            });
            if let Some(me) = me.upgrade() {
                me.observers.lock().await.retain(|_, o| !o.conn.is_closed());
            }
        });
    }
}

impl Watcher for Follower {
    fn notification(&self, n: &Notification) {
        use Notification as N;
        match n {
            N::LayoutChange {
                window,
                layout,
                #[cfg_attr(not(feature = "emulator"), allow(unused_variables))]
                visible_layout,
                ..
            } => {
                // Every connection's follower watches from the start: one
                // that follows nothing has no layout to read.
                let followed = self.all();
                if followed.is_empty() {
                    return;
                }
                let Some(panes) = layout_pane_sizes(layout) else {
                    return;
                };
                // While a pane is zoomed the visible layout has the sizes
                // the panes really have.
                #[cfg(feature = "emulator")]
                let visible = visible_layout
                    .as_deref()
                    .and_then(layout_pane_sizes)
                    .unwrap_or_default();
                let mut vanished = false;
                for log in followed {
                    let me = log.pane();
                    if let Some(_place) = panes.iter().find(|p| p.pane == me) {
                        #[cfg(feature = "emulator")]
                        let lost = {
                            let size = visible.iter().find(|p| p.pane == me).unwrap_or(_place);
                            log.resize_emulator(size.width, size.height)
                        };
                        log.update_state(|s| {
                            s.window = Some(*window);
                            s.layout_generation += 1;
                        });
                        // After the new generation, which the seed checks.
                        #[cfg(feature = "emulator")]
                        if lost {
                            self.reseed(&log);
                        }
                    } else if log.window() == Some(*window) {
                        vanished = true;
                    }
                }
                if vanished {
                    self.check_panes();
                }
            }
            N::WindowClose { window } | N::UnlinkedWindowClose { window }
                if self.all().iter().any(|l| l.window() == Some(*window)) =>
            {
                self.check_panes();
            }
            N::SubscriptionChanged {
                name,
                pane: Some(pane),
                value,
                ..
            } if name.starts_with(state::PREFIX) => {
                if let Some(log) = self.get(*pane) {
                    apply_state(&log, name, value);
                }
                if &name[..] == state::DEAD.as_bytes() && &value[..] == b"1 " {
                    self.nudge_reaping();
                }
            }
            _ => {}
        }
    }
}

impl Tmux {
    /// Follows a pane's output, in any session of the server.
    ///
    /// tmux sends a pane's output only to control clients attached to a
    /// session that contains it. For a pane in another session the library
    /// attaches an observer connection to that session (with
    /// `ignore-size`, so it never changes a window's size) and routes its
    /// output here. Everything the pane writes after this returns is
    /// captured: create waits and streams from the returned handle before
    /// acting on the pane.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use tmux_control::command::{NewWindow, SendKeys};
    /// use tmux_control::{IsolatedServer, Pattern, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let window = tmux.run(NewWindow::new().command("exec cat")).await?;
    /// let output = tmux.follow(window.pane).await?;
    /// let echoed = output.expect(Pattern::literal("hello"));
    /// tmux.run(SendKeys::literal(window.pane, "hello")).await?;
    /// echoed.wait(Duration::from_secs(10)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn follow(&self, pane: PaneId) -> Result<PaneOutput> {
        // A pane already followed needs no round trip.
        if let Some(log) = self.followed_log(pane).await {
            return Ok(PaneOutput::new(log, self.clone()));
        }
        let place = self.resolve(pane).await?;
        let (session, window) = (place.session, place.window);
        let (conn, follower) = if self.attached_session() == Some(session) {
            (self.connection().clone(), self.follower().clone())
        } else {
            let o = self.follower().observer(self.connection(), session).await?;
            (o.conn, o.follower)
        };
        let log = follower.log(&conn, pane, window).await?;
        if !Arc::ptr_eq(&follower, self.follower()) {
            // Through an observer, which closes when its session ends: this
            // connection tells whether the pane went with it.
            let handler: Weak<dyn CloseHandler> = self.follower().me.clone();
            log.on_close(handler);
        }
        #[cfg(feature = "emulator")]
        if log.emulator().is_none() {
            super::emulated::seed(&log, &conn).await?;
        }
        Ok(PaneOutput::new(log, self.clone()))
    }
}

impl Tmux {
    /// The log of `pane` if it is followed through this connection or one
    /// of its observers and has not ended.
    async fn followed_log(&self, pane: PaneId) -> Option<Arc<PaneLog>> {
        let follower = self.follower();
        if let Some(log) = follower.get(pane).filter(|l| !l.is_ended()) {
            return Some(log);
        }
        for observer in follower.observer_followers().await {
            if let Some(log) = observer.get(pane).filter(|l| !l.is_ended()) {
                return Some(log);
            }
        }
        None
    }
}

impl Tmux {
    /// The panes followed through this connection (and its observers)
    /// that have not ended, in no particular order: with
    /// [`ConnectOptions::keep_followed`], every pane ever followed that
    /// still exists; without it, those with a live handle or stream.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{ConnectOptions, IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect_with(server.server(), ConnectOptions::default().keep_followed()).await?;
    /// let window = tmux.run(NewWindow::new().command("exec cat")).await?;
    /// drop(tmux.follow(window.pane).await?);
    /// let followed = tmux.followed().await;
    /// assert_eq!(followed.len(), 1);
    /// assert_eq!(followed[0].pane(), window.pane);
    /// # Ok(()) }
    /// ```
    ///
    /// [`ConnectOptions::keep_followed`]: crate::ConnectOptions::keep_followed
    pub async fn followed(&self) -> Vec<PaneOutput> {
        let follower = self.follower();
        let mut logs = follower.all();
        for observer in follower.observer_followers().await {
            logs.extend(observer.all());
        }
        logs.into_iter()
            .filter(|log| !log.is_ended())
            .map(|log| PaneOutput::new(log, self.clone()))
            .collect()
    }
}

/// Applies one of the state subscriptions' values to a followed pane.
fn apply_state(log: &PaneLog, name: &[u8], value: &[u8]) {
    let text = String::from_utf8_lossy(value).into_owned();
    let nonempty = |t: &str| (!t.is_empty()).then(|| t.to_owned());
    match name {
        b"tmux-control-dead" => {
            let mut parts = text.split(' ');
            let dead = parts.next() == Some("1");
            let status = parts.next().and_then(|s| s.parse().ok());
            log.update_state(|s| {
                s.dead = dead;
                s.exit_status = if dead { status } else { None };
            });
        }
        b"tmux-control-cmd" => log.update_state(|s| s.current_command = nonempty(&text)),
        b"tmux-control-path" => log.update_state(|s| s.current_path = nonempty(&text)),
        b"tmux-control-title" => log.update_state(|s| s.title = nonempty(&text)),
        b"tmux-control-mode" => {
            let mut parts = text.split(' ');
            let in_mode = parts.next() == Some("1");
            let alternate = parts.next() == Some("1");
            log.update_state(|s| {
                s.in_mode = in_mode;
                s.alternate_screen = alternate;
            });
        }
        _ => {}
    }
}
