//! Tool lists read once and filtered for many callers ([`Gate::prepare_tools`]).
//!
//! A host that offers one tool list to many callers — a gateway, an agent server answering each
//! request with the same tools — pays for reading the list on every `filter_tools`: the strict
//! parse of tens of kilobytes of schemas is nearly all of a filter's time, the filter itself a
//! few percent. A [`PreparedTools`] is that list read and checked once. Each filter then asks
//! only the caller's visibility of the names the list declares; what a set of answers removes is
//! worked out once and remembered, so a caller whose answers were seen before costs those
//! lookups and nothing else.
//!
//! Why a remembered answer is exact: a codec's filter is a function of the list and of what its
//! name test answers, nothing else (no clock, no state, no order of calls). The names a filter
//! asks are recorded as it runs. The first filter (at preparation) fixes the list's known names;
//! a later run is remembered only when every name it asked is one of them, and it is found again
//! only by a caller whose answers for all of them are the same — so that caller's own run would
//! ask the same names in the same order, get the same answers, and remove the same things. A run
//! that asked a name outside the known ones is answered and not remembered.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

use ahash::AHashSet;
use serde_json::Value;

use crate::dialect::sieve::{filter_list, remove_paths};
use crate::dialect::Dialect;
use crate::error::GateError;
use crate::gate::who::Who;
use crate::gate::Gate;
use crate::json::pointer::Seg;

/// How many sets of answers a prepared list remembers (the oldest is forgotten first). Callers
/// of one list usually fall into a handful of roles; one remembered run holds its removals and,
/// once text was asked for, the filtered text (at most the list's own size).
pub const REMEMBERED_RUNS: usize = 16;

/// A tool list in one dialect's request shape, read strictly and checked once (the checks and
/// errors of [`Gate::filter_tools`]), to be filtered for any number of callers with
/// [`Gate::filter_prepared`] / [`Gate::filter_prepared_removals`].
///
/// Guarantees: the list is never changed after preparation (every answer is about the text it
/// was prepared from); every answer equals what [`Gate::filter_tools_as`] /
/// [`Gate::filter_tools_removals`] answer for that text and caller; memory is bounded by
/// [`REMEMBERED_RUNS`] runs. Safe to share between threads.
pub struct PreparedTools {
    dialect: Dialect,
    list: Value,
    /// The length of the text it was read from (checked again against a filtering gate's limit).
    bytes: usize,
    /// Every name the first filter asked about.
    names: AHashSet<Box<str>>,
    /// The same names in the order first asked (the answers are read in it).
    order: Vec<Box<str>>,
    /// Remembered runs, the most recently used first.
    runs: Mutex<VecDeque<Arc<Run>>>,
}

impl std::fmt::Debug for PreparedTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedTools").field("dialect", &self.dialect).field("bytes", &self.bytes).field("names", &self.order.len()).finish_non_exhaustive()
    }
}

/// One filter's answer for one set of visibility answers.
struct Run {
    /// The answer for each known name, one bit each.
    shown: Box<[u64]>,
    removed: Arc<[Vec<Seg>]>,
    /// The filtered list as JSON text, made the first time it is asked for.
    text: OnceLock<Arc<str>>,
}

impl PreparedTools {
    /// The dialect the list was read in.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The number of distinct names the list's filter asks about (tool names, and in Gemini the
    /// capabilities' tool names).
    pub fn names(&self) -> usize {
        self.order.len()
    }

    /// The remembered run for these answers, if any (moved to the front).
    fn remembered(&self, shown: &[u64]) -> Option<Arc<Run>> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        let i = runs.iter().position(|r| *r.shown == *shown)?;
        let run = runs.remove(i)?;
        runs.push_front(Arc::clone(&run));
        Some(run)
    }

    /// Remembers `run`, forgetting the least recently used beyond [`REMEMBERED_RUNS`].
    fn remember(&self, run: &Arc<Run>) {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        if runs.iter().any(|r| r.shown == run.shown) {
            return;
        }
        runs.push_front(Arc::clone(run));
        runs.truncate(REMEMBERED_RUNS);
    }
}

impl Gate {
    /// Reads and checks `tools` (JSON text in `d`'s request shape) once, for
    /// [`Gate::filter_prepared`]: the same strict read, checks and errors as
    /// [`Gate::filter_tools`] (the list is filtered once here, so a list of the wrong shape is
    /// refused now, not at its first use).
    pub fn prepare_tools(&self, d: Dialect, tools: &str) -> Result<PreparedTools, GateError> {
        let mut list = self.read_tool_list(d, tools)?;
        let asked = std::cell::RefCell::new(Vec::<Box<str>>::new());
        // every name kept, so the filter runs on the list itself rather than a copy (a copy of
        // tens of kilobytes of schemas was a third of a preparation): a codec changes a list
        // only through its sieve, which records each removal, so none recorded means unchanged
        let removed = filter_list(d, &mut list, &|name: &str| {
            asked.borrow_mut().push(name.into());
            true
        })?;
        if !removed.is_empty() {
            list = self.read_tool_list(d, tools)?;
        }
        let mut names = AHashSet::new();
        let mut order = asked.into_inner();
        order.retain(|n| names.insert(n.clone()));
        Ok(PreparedTools { dialect: d, list, bytes: tools.len(), names, order, runs: Mutex::new(VecDeque::new()) })
    }

    /// What [`Gate::filter_tools_removals`] answers for the text `tools` was prepared from and
    /// this caller — without reading the list again.
    pub fn filter_prepared_removals(&self, tools: &PreparedTools, who: &Who<'_>) -> Result<Arc<[Vec<Seg>]>, GateError> {
        Ok(Arc::clone(&self.prepared_run(tools, who, false)?.removed))
    }

    /// What [`Gate::filter_tools_as`] answers for the text `tools` was prepared from and this
    /// caller — without reading the list again (the text is made once per set of answers).
    pub fn filter_prepared(&self, tools: &PreparedTools, who: &Who<'_>) -> Result<Arc<str>, GateError> {
        let run = self.prepared_run(tools, who, true)?;
        Ok(Arc::clone(run.text.get_or_init(|| {
            let mut v = tools.list.clone();
            // the removals were made on this very list: every path names something in it
            remove_paths(&mut v, &run.removed);
            serde_json::to_string(&v).unwrap_or_default().into()
        })))
    }

    /// The run for this caller's answers: remembered, or made now (and remembered when exact;
    /// with its text when `text` asks for it).
    fn prepared_run(&self, tools: &PreparedTools, who: &Who<'_>, text: bool) -> Result<Arc<Run>, GateError> {
        if tools.bytes > self.max_payload_bytes() {
            return Err(GateError::Payload(format!(
                "{} tool list: {} bytes, over the limit of {} bytes (limits.maxPayloadBytes)",
                tools.dialect,
                tools.bytes,
                self.max_payload_bytes()
            )));
        }
        let listing = self.listing(who);
        let mut shown = vec![0u64; tools.order.len().div_ceil(64)].into_boxed_slice();
        if !listing.shows_none() {
            for (i, name) in tools.order.iter().enumerate() {
                if listing.shows_name(name) {
                    shown[i / 64] |= 1 << (i % 64);
                }
            }
        }
        if let Some(run) = tools.remembered(&shown) {
            return Ok(run);
        }
        let unknown = Cell::new(false);
        let keep = |name: &str| {
            if !tools.names.contains(name) {
                unknown.set(true);
            }
            listing.shows_name(name)
        };
        let mut list = tools.list.clone();
        let removed: Arc<[Vec<Seg>]> = filter_list(tools.dialect, &mut list, &keep)?.into();
        let made = OnceLock::new();
        if text {
            let _ = made.set(serde_json::to_string(&list).unwrap_or_default().into());
        }
        let run = Arc::new(Run { shown, removed, text: made });
        if !unknown.get() {
            tools.remember(&run);
        }
        Ok(run)
    }
}
