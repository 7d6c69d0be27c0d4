//! The logs of one connection ([`Journals`]): each pane's log is opened
//! (or recovered from disk) the first time the pane is followed, kept in
//! the pane's record, fed by a task of its own until the pane ends, and
//! removed with the pane; the logs of panes that ended unseen are pruned.

use std::path::PathBuf;
use std::sync::Arc;

use tmux_control::command::Raw;
use tmux_control::{PaneChunk, PaneEnd, PaneId, PaneOutput, Tmux};

use crate::terminal::lock::lock;
use crate::terminal::record::Terminals;
use crate::terminal::regions::Regions;

use super::Journal;
use super::dirs::{OPTION, log_id, prune_dead, remove_log_dir, write_server_file};
use super::disk::StoredRegion;

/// The cooked logs of one connection's panes. Each pane's log (and the
/// output that feeds it) is a part of its record
/// ([`crate::terminal::record::Terminal`]).
pub(crate) struct Journals {
    root: Option<PathBuf>,
    max_bytes: u64,
    /// The process id of the local tmux server whose panes these are
    /// (`None` on a remote host, or when tmux did not say).
    server: Option<u32>,
    /// The records the panes' logs are kept in.
    terminals: Arc<Terminals>,
    /// Called with a pane once it is gone and its log removed: everything
    /// else known about it is forgotten there ([`Journals::when_gone`]).
    gone: std::sync::OnceLock<GoneHook>,
    /// How many gone panes were forgotten so far.
    forgotten: tokio::sync::watch::Sender<u64>,
    /// Called with a pane and how many bytes its log missed, when the
    /// in-memory log evicted output before the durable log recorded it
    /// ([`Journals::when_missed`]).
    missed: std::sync::OnceLock<MissedHook>,
}

/// What [`Journals::when_gone`] sets.
type GoneHook = Box<dyn Fn(PaneId) + Send + Sync>;

/// What [`Journals::when_missed`] sets: the pane, the first offset missed
/// and the number of bytes.
type MissedHook = Box<dyn Fn(PaneId, u64, u64) + Send + Sync>;

impl Journals {
    /// Logs under `root` (`STATE_DIR/logs`), each bounded to `max_bytes` on
    /// disk and in memory; memory only when `root` is `None`. `server` is
    /// the local tmux server's process id, written into each log directory
    /// (see [`Journals::prune`]). Each pane's log is kept in its record in
    /// `terminals`.
    pub(crate) fn new(
        root: Option<PathBuf>,
        max_bytes: u64,
        server: Option<u32>,
        terminals: Arc<Terminals>,
    ) -> Self {
        Self {
            root,
            max_bytes,
            server,
            terminals,
            gone: std::sync::OnceLock::new(),
            forgotten: tokio::sync::watch::Sender::new(0),
            missed: std::sync::OnceLock::new(),
        }
    }

    /// Has `hook` called each time a pane's durable log misses output (the
    /// in-memory log evicted it first). Set once.
    pub(crate) fn when_missed(&self, hook: MissedHook) {
        let _ = self.missed.set(hook);
    }

    /// Has `hook` called with each pane once it is gone and its log is
    /// removed (the connection forgets the pane there). Set once.
    pub(crate) fn when_gone(&self, hook: GoneHook) {
        let _ = self.gone.set(hook);
    }

    /// Completes once `count` gone panes have been forgotten in all.
    #[cfg(test)]
    pub(crate) async fn forgotten(&self, count: u64) {
        let _ = self.forgotten.subscribe().wait_for(|n| *n >= count).await;
    }

    /// How many panes have a log.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.terminals.count(|t| lock(&t.journal).is_some())
    }

    /// Removes the logs of panes that ended while no tmux-mcp watched them:
    /// those whose tmux server process is gone (it was killed, or the
    /// machine restarted), and those of this connection's own server that
    /// no pane names in its `@tmux-mcp-log` option any more. Returns how
    /// many it removed.
    ///
    /// The directories are listed before the panes: a pane names its log
    /// in its option before the directory is made, so a directory listed
    /// first belongs to a pane that the listing shows while it lives (also
    /// one another tmux-mcp process on the same server has just made).
    pub(crate) async fn prune(&self, tmux: &Tmux) -> usize {
        let (Some(root), Some(server)) = (&self.root, self.server) else {
            return 0;
        };
        let (mut removed, ours) = prune_dead(root, server);
        if ours.is_empty() {
            return removed;
        }
        let listed = tmux
            .run(Raw::new("list-panes").args(["-a", "-F", &format!("#{{{OPTION}}}")]))
            .await;
        let Ok(lines) = listed else {
            return removed;
        };
        let named: std::collections::HashSet<String> = lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).trim().to_owned())
            .collect();
        for dir in ours {
            let named_by_a_pane = dir
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| named.contains(n));
            if !named_by_a_pane && remove_log_dir(&dir) {
                removed += 1;
            }
        }
        removed
    }

    /// The pane's log and its output, if it has a log yet.
    fn opened(&self, pane: PaneId) -> Option<(Arc<Journal>, PaneOutput)> {
        let terminal = self.terminals.get(pane)?;
        let journal = lock(&terminal.journal);
        journal.clone()
    }

    /// Completes once every pane's log holds the output seen so far and
    /// the regions of `version` (see [`Journal::settled`]).
    pub(crate) async fn settled(&self, version: u64) {
        let logs: Vec<(Arc<Journal>, u64)> = self
            .terminals
            .all()
            .iter()
            .filter_map(|t| {
                lock(&t.journal)
                    .as_ref()
                    .map(|(journal, po)| (journal.clone(), po.end_offset()))
            })
            .collect();
        for (journal, offset) in logs {
            journal.settled(offset, version).await;
        }
    }

    /// The pane's log, if it has one yet.
    pub(crate) fn get(&self, pane: PaneId) -> Option<Arc<Journal>> {
        self.opened(pane).map(|(j, _)| j)
    }

    /// The output of a pane whose log is open and whose output has not
    /// ended: a pane that exists, known without asking tmux.
    pub(crate) fn live_output(&self, pane: PaneId) -> Option<PaneOutput> {
        self.opened(pane)
            .map(|(_, po)| po)
            .filter(|po| po.ended().is_none())
    }

    /// The pane's log, opened (or recovered from disk, with its regions)
    /// the first time, and fed from then on by a task of its own.
    pub(crate) async fn ensure(
        self: &Arc<Self>,
        tmux: &Tmux,
        po: &PaneOutput,
        regions: &Arc<Regions>,
    ) -> Arc<Journal> {
        let pane = po.pane();
        if let Some(journal) = self.get(pane) {
            return journal;
        }
        let dir = match &self.root {
            Some(root) => Some(root.join(log_id(tmux, pane).await)),
            None => None,
        };
        let (journal, recovered) = Journal::open(dir, self.max_bytes, po.start_offset());
        if let (Some(server), Some(dir)) = (self.server, journal.lock().dir.clone()) {
            write_server_file(&dir, server);
        }
        let journal = Arc::new(journal);
        {
            let terminal = self.terminals.entry(pane);
            let mut opened = lock(&terminal.journal);
            if let Some((other, _)) = &*opened {
                return other.clone();
            }
            *opened = Some((journal.clone(), po.clone()));
        }
        regions.recover(pane, recovered.into_iter().map(StoredRegion::into_region));
        tokio::spawn(feed(
            self.clone(),
            journal.clone(),
            po.clone(),
            regions.clone(),
        ));
        journal
    }
}

/// Feeds the pane's log from its output stream until the pane ends.
async fn feed(
    journals: Arc<Journals>,
    journal: Arc<Journal>,
    po: PaneOutput,
    regions: Arc<Regions>,
) {
    let pane = po.pane();
    let mut changed = regions.subscribe();
    let fed = journal.lock().fed;
    let mut stream = po.stream_from(fed);
    // Regions recorded and not yet written (their output may still be
    // coming): looked at again after each feed until none is left.
    let mut pending = true;
    loop {
        tokio::select! {
            chunk = stream.next() => match chunk {
                Some(PaneChunk::Output { offset, data }) => {
                    journal.resize_from(&po);
                    journal.feed(offset, &data);
                }
                Some(PaneChunk::Missed { from, to }) => {
                    journal.gap(
                        to,
                        format!("[{} bytes of output not recorded here: the in-memory log evicted them first]", to - from),
                    );
                    if let Some(hook) = journals.missed.get() {
                        hook(pane, from, to - from);
                    }
                }
                Some(PaneChunk::Lost { at }) => journal.gap(
                    at,
                    "[output lost here: tmux discarded some while the pane was paused]".to_owned(),
                ),
                Some(_) => {}
                None => break,
            },
            Ok(()) = changed.changed() => pending = true,
        }
        // A change that came with the output counts too.
        pending |= changed.has_changed().unwrap_or(false);
        let version = *changed.borrow_and_update();
        if pending {
            pending = journal.write_regions(regions.since(pane, journal.last_id()), &po);
        }
        if !pending {
            journal.mark_synced(version);
        }
    }
    journal.write_regions(regions.since(pane, journal.last_id()), &po);
    if matches!(po.ended(), Some(PaneEnd::Gone)) {
        journal.remove_files();
        if let Some(terminal) = journals.terminals.get(pane) {
            lock(&terminal.journal).take();
        }
        if let Some(hook) = journals.gone.get() {
            hook(pane);
        }
        journals.forgotten.send_modify(|n| *n += 1);
    }
}
