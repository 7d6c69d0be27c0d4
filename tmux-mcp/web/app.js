// The web view of tmux-mcp: a live list of terminals and any number of
// xterm.js views of them over one WebSocket. The protocol, the page's
// behaviour and its test API (window.tmuxView) are in docs/web-view.md.
'use strict';

(() => {
  // Where the page's own files are (/ui/): the session and the socket are
  // beside them.
  const BASE = new URL('.', document.currentScript.src);
  const ACK_BYTES = 64 * 1024;
  const ACK_LATEST_MS = 100; // the ack's fallback when no animation frame comes (a hidden tab)
  const BACKOFF_FIRST_MS = 100;
  const BACKOFF_LAST_MS = 5000;
  const MARKS_KEPT = 100000; // past that, the oldest half is dropped
  const NOTICE_MS = 10000;
  const INSET = 6; // px of the screen's box around its terminal

  const query = new URLSearchParams(location.search);
  const scrollbackAsked = Number.parseInt(query.get('scrollback') ?? '', 10);
  const SCROLLBACK = Number.isInteger(scrollbackAsked) && scrollbackAsked >= 0 ? scrollbackAsked : 10000;

  const $ = (id) => document.getElementById(id);
  const el = (tag, props = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? '' : v);
    }
    node.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
    return node;
  };
  const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
  const decoder = new TextDecoder();

  let readyResolve;
  let readyReject;
  const ready = new Promise((resolve, reject) => {
    readyResolve = resolve;
    readyReject = reject;
  });
  ready.catch(() => {}); // a refused key is shown on the page, not as an unhandled rejection

  const api = {
    ready,
    terminals: [],
    hosts: [],
    name: null,
    scope: null,
    views: {},
    held: {},
    refusals: [],
    socket: null,
    reconnects: 0,
    marks: [],
    open,
    close,
    screenText,
    bufferText,
    take: (id) => send({ op: 'take', id }),
    release: (id) => send({ op: 'release', id }),
    type: (id, text) => send({ op: 'input', id, data: String(text) }),
  };
  window.tmuxView = api;
  const views = api.views;

  // ------------------------------------------------------------ the session

  function decoded(text) {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  }

  async function signIn() {
    const found = /(?:^#|&)key=([^&]*)/.exec(location.hash);
    let answer;
    if (found) {
      // The key leaves the address bar (and the history) before anything else.
      history.replaceState(history.state, '', location.pathname + location.search);
      answer = await fetch(new URL('session', BASE), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ key: decoded(found[1]) }),
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } else {
      answer = await fetch(new URL('session', BASE), { credentials: 'same-origin', cache: 'no-store' });
    }
    let body = {};
    try {
      body = await answer.json();
    } catch {
      // an answer without JSON: its status says enough
    }
    if (!answer.ok) {
      const why = body.error || `${answer.status} ${answer.statusText}`;
      throw new Error(found ? `the link's key was refused: ${why}` : `no session: ${why}`);
    }
    return body;
  }

  function showWho() {
    $('who').textContent = api.name ? `${api.name} · ${api.scope === 'input' ? 'can take over' : 'view only'}` : '';
  }

  function setStatus(text, kind) {
    const status = $('status');
    status.textContent = text;
    status.className = `status ${kind || ''}`;
  }

  // ------------------------------------------------------------ the socket

  let backoff = BACKOFF_FIRST_MS;
  let opened = false; // whether a socket was ever opened (for `reconnects`)
  let stopped = false;

  function connect() {
    const url = new URL('ws', BASE);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    api.socket = ws;
    let greeted = false;
    ws.addEventListener('open', () => {
      if (opened) api.reconnects += 1;
      opened = true;
      for (const v of Object.values(views)) if (!v.ended) attach(v);
    });
    ws.addEventListener('message', (event) => {
      if (api.socket !== ws) return;
      if (!greeted) {
        greeted = true;
        backoff = BACKOFF_FIRST_MS;
      }
      if (typeof event.data === 'string') onText(event.data);
      else onBinary(event.data);
    });
    ws.addEventListener('close', () => {
      if (api.socket !== ws || stopped) return;
      if (greeted) {
        reconnectLater();
        return;
      }
      // Refused before its first frame: a session that ended (a revoked
      // key) is told apart from a server that is away.
      fetch(new URL('session', BASE), { credentials: 'same-origin', cache: 'no-store' }).then(
        (answer) => {
          if (answer.status === 401 || answer.status === 403) signedOut('the session ended (the key was revoked?)');
          else reconnectLater();
        },
        () => reconnectLater(),
      );
    });
  }

  function reconnectLater() {
    const wait = backoff;
    backoff = Math.min(backoff * 2, BACKOFF_LAST_MS);
    setStatus(`disconnected; reconnecting in ${(wait / 1000).toFixed(1)} s`, 'down');
    // A true timer: the reconnect's backoff.
    setTimeout(connect, wait);
  }

  function signedOut(why) {
    stopped = true;
    setStatus(why, 'bad');
    readyReject(new Error(why));
    const empty = $('empty');
    empty.textContent = `Not signed in: ${why}. Open the view with a link that has a key (the web_view tool gives one; tmux-mcp web-key add NAME makes a named key).`;
    empty.classList.add('bad');
    empty.hidden = false;
    $('views').prepend(empty);
  }

  function send(message) {
    const ws = api.socket;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(message));
    return true;
  }

  function onText(text) {
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      console.warn('tmux-mcp: a frame that is not JSON', text);
      return;
    }
    const v = m.id !== undefined ? views[m.id] : undefined;
    switch (m.t) {
      case 'hello':
        api.name = m.name;
        api.scope = m.scope;
        showWho();
        setStatus('connected', 'up');
        for (const view of Object.values(views)) updateButtons(view);
        break;
      case 'terminals':
        api.terminals = m.terminals || [];
        api.hosts = m.hosts || [];
        renderSidebar();
        for (const view of Object.values(views)) {
          updateHeader(view);
          updateButtons(view);
        }
        readyResolve();
        break;
      case 'snapshot':
        if (!v) return;
        v.offset = m.offset;
        enqueue(v, { kind: 'snapshot', offset: m.offset, cols: m.cols, rows: m.rows, data: m.data });
        break;
      case 'resize':
        if (!v) return;
        enqueue(v, { kind: 'resize', cols: m.cols, rows: m.rows });
        break;
      case 'lost':
        if (v) notice(v, `Output before offset ${m.at} could not be shown (${m.why}); a fresh snapshot follows.`);
        break;
      case 'held':
        api.held[m.id] = { by: m.by ?? null, you: Boolean(m.you) };
        if (v) updateButtons(v);
        break;
      case 'refused':
        api.refusals.push(m);
        if (v) notice(v, `Refused (${m.op}): ${m.why}`, 'bad');
        else console.warn('tmux-mcp: refused', m);
        break;
      case 'ended':
        if (v) endView(v, m.why);
        break;
      default:
        console.warn('tmux-mcp: an unknown frame', m);
    }
  }

  // A binary frame: 0x01, u16 id length, id, u64 offset, u64 server clock (µs), bytes.
  function onBinary(buffer) {
    const dv = new DataView(buffer);
    if (buffer.byteLength < 3 || dv.getUint8(0) !== 0x01) {
      console.warn('tmux-mcp: a binary frame of an unknown kind');
      return;
    }
    const idLength = dv.getUint16(1);
    const at = 3 + idLength;
    if (buffer.byteLength < at + 16) {
      console.warn('tmux-mcp: a truncated binary frame');
      return;
    }
    const id = decoder.decode(new Uint8Array(buffer, 3, idLength));
    const offset = Number(dv.getBigUint64(at));
    const serverUs = Number(dv.getBigUint64(at + 8));
    let bytes = new Uint8Array(buffer, at + 16);
    const v = views[id];
    // Before the view's snapshot its terminal holds nothing to continue.
    if (!v || v.offset === null) return;
    const end = offset + bytes.length;
    // After a re-attach the server sends again from the written offset:
    // what was received already is in the terminal's queue, and is dropped.
    if (end <= v.offset) return;
    if (offset < v.offset) bytes = bytes.subarray(v.offset - offset);
    else if (offset > v.offset) console.warn(`tmux-mcp: ${id}: a gap from ${v.offset} to ${offset}`);
    v.offset = end;
    enqueue(v, { kind: 'data', bytes, offset, end, serverUs });
  }

  // ------------------------------------------------------------ writing into a terminal

  // Data goes straight to xterm.js (its writes are in order); a snapshot or
  // a resize waits until every earlier write is parsed, so it applies
  // between the right bytes.
  function enqueue(v, op) {
    v.queue.push(op);
    pump(v);
  }

  function pump(v) {
    while (v.queue.length && !v.disposed) {
      const op = v.queue[0];
      if (op.kind !== 'data' && v.inflight > 0) return;
      v.queue.shift();
      if (op.kind === 'data') writeData(v, op);
      else if (op.kind === 'snapshot') writeSnapshot(v, op);
      else resizeTerm(v, op.cols, op.rows);
    }
  }

  function writeData(v, op) {
    v.inflight += 1;
    v.term.write(op.bytes, () => {
      v.inflight -= 1;
      if (v.disposed) return;
      v.written = op.end;
      const marks = api.marks;
      if (marks.length >= MARKS_KEPT) marks.splice(0, MARKS_KEPT / 2);
      marks.push({ id: v.id, offset: op.offset, end: op.end, serverUs: op.serverUs, writtenUs: nowUs() });
      wrote(v);
      pump(v);
    });
  }

  function writeSnapshot(v, op) {
    v.term.reset();
    resizeTerm(v, op.cols, op.rows);
    v.inflight += 1;
    v.term.write(op.data, () => {
      v.inflight -= 1;
      if (v.disposed) return;
      v.written = op.offset;
      wrote(v);
      pump(v);
    });
  }

  function resizeTerm(v, cols, rows) {
    if (cols > 0 && rows > 0 && (v.term.cols !== cols || v.term.rows !== rows)) v.term.resize(cols, rows);
    v.cols = v.term.cols;
    v.rows = v.term.rows;
    updateHeader(v);
    rescale(v);
  }

  function wrote(v) {
    if (v.firstWritten) {
      v.firstWritten();
      v.firstWritten = null;
    }
    if (v.written - v.acked >= ACK_BYTES) ack(v);
    else scheduleAcks();
  }

  function ack(v) {
    if (v.written !== null && v.written !== v.acked && send({ op: 'ack', id: v.id, offset: v.written })) {
      v.acked = v.written;
    }
  }

  // At most one round of acks per animation frame (or, when no frame comes,
  // as in a hidden tab, after ACK_LATEST_MS), and at once every ACK_BYTES.
  let ackFrame = null;
  let ackTimer = null;
  function scheduleAcks() {
    if (ackFrame !== null) return;
    const flush = () => {
      cancelAnimationFrame(ackFrame);
      clearTimeout(ackTimer);
      ackFrame = null;
      ackTimer = null;
      for (const v of Object.values(views)) ack(v);
    };
    ackFrame = requestAnimationFrame(flush);
    // A true timer: the latest an ack waits when no frame is drawn.
    ackTimer = setTimeout(flush, ACK_LATEST_MS);
  }

  // ------------------------------------------------------------ views

  function termInfo(id) {
    return api.terminals.find((t) => t.id === id);
  }

  function attach(v) {
    const message = { op: 'attach', id: v.id };
    if (v.written !== null) {
      message.from = v.written;
      v.acked = v.written;
    } else {
      v.offset = null; // a snapshot comes first
    }
    send(message);
  }

  function open(id) {
    id = String(id);
    const existing = views[id];
    if (existing) return existing.opened;
    const info = termInfo(id);
    const term = new window.Terminal({
      cols: info?.width > 0 ? info.width : 80,
      rows: info?.height > 0 ? info.height : 24,
      scrollback: SCROLLBACK,
      convertEol: false,
      disableStdin: true,
      cursorBlink: false,
      fontFamily: '"DejaVu Sans Mono", "Noto Sans Mono", ui-monospace, Menlo, Consolas, monospace',
      fontSize: 14,
      theme: { background: '#0b0e12', foreground: '#d6dbe2', cursor: '#d6dbe2', selectionBackground: '#3a4a63' },
    });
    const v = {
      id,
      term,
      offset: null,
      written: null,
      acked: null,
      cols: term.cols,
      rows: term.rows,
      queue: [],
      inflight: 0,
      ended: false,
      disposed: false,
      firstWritten: null,
      opened: null,
      dom: null,
    };
    v.opened = new Promise((resolve, reject) => {
      v.firstWritten = resolve;
      v.openFailed = reject;
    });
    v.opened.catch(() => {});
    views[id] = v;
    buildView(v);
    silenceQueries(term);
    term.onData((data) => {
      if (!api.held[id]?.you || v.ended) return;
      if (!send({ op: 'input', id, data })) notice(v, 'Not connected: what you typed was not sent.', 'bad');
    });
    attach(v);
    markOpenInSidebar();
    return v.opened;
  }

  // The pane's program already has its answers from tmux: the page's
  // terminal must not answer its queries too (its answers would be typed
  // into the pane while a person holds it).
  function silenceQueries(term) {
    const swallow = () => true;
    for (const id of [
      { final: 'c' }, // DA1
      { prefix: '>', final: 'c' }, // DA2
      { final: 'n' }, // DSR (status, cursor position)
      { prefix: '?', final: 'n' }, // DECDSR
      { intermediates: '$', final: 'p' }, // DECRQM
      { prefix: '?', intermediates: '$', final: 'p' },
    ]) {
      term.parser.registerCsiHandler(id, swallow);
    }
    term.parser.registerDcsHandler({ intermediates: '$', final: 'q' }, swallow); // DECRQSS
    for (const osc of [4, 10, 11, 12]) term.parser.registerOscHandler(osc, (data) => data.includes('?'));
  }

  function close(id) {
    const v = views[String(id)];
    if (!v) return;
    if (api.held[v.id]?.you) send({ op: 'release', id: v.id });
    send({ op: 'detach', id: v.id });
    v.disposed = true;
    v.openFailed?.(new Error(`${v.id} was closed`));
    v.resizer.disconnect();
    v.term.dispose();
    v.dom.section.remove();
    delete views[v.id];
    delete api.held[v.id];
    if (!Object.keys(views).length) $('empty').hidden = false;
    markOpenInSidebar();
  }

  function endView(v, why) {
    v.ended = true;
    v.term.options.disableStdin = true;
    v.dom.section.classList.add('ended');
    notice(v, `This terminal ended: ${why}`, 'bad', true);
    v.openFailed?.(new Error(`${v.id} ended: ${why}`));
    updateButtons(v);
  }

  function buildView(v) {
    const title = el('h2', {});
    const holder = el('span', { class: 'holder' });
    const take = el('button', { type: 'button', class: 'take', text: 'Take over', onclick: () => api.take(v.id) });
    const release = el('button', {
      type: 'button',
      class: 'release',
      text: 'Hand back',
      onclick: () => api.release(v.id),
    });
    const fit = el('button', { type: 'button', class: 'fit', text: 'Fit to window', onclick: () => fitToWindow(v) });
    const closer = el('button', {
      type: 'button',
      class: 'close',
      text: '×',
      title: 'Close this view',
      'aria-label': `Close (${v.id})`,
      onclick: () => close(v.id),
    });
    const noticeBox = el('div', { class: 'notice', role: 'status', 'aria-live': 'polite', hidden: true });
    const scaler = el('div', { class: 'scaler' });
    const screen = el('div', { class: 'screen' }, scaler);
    const section = el(
      'section',
      { class: 'view', 'data-id': v.id, tabindex: '-1' },
      el('div', { class: 'view-bar' }, title, holder, take, release, fit, closer),
      noticeBox,
      screen,
    );
    v.dom = { section, title, holder, take, release, fit, noticeBox, screen, scaler, noticeTimer: null };
    $('empty').hidden = true;
    $('views').append(section);
    v.term.open(scaler);
    v.resizer = new ResizeObserver(() => rescale(v));
    v.resizer.observe(screen);
    const xtermScreen = v.term.element?.querySelector('.xterm-screen');
    if (xtermScreen) v.resizer.observe(xtermScreen);
    updateHeader(v);
    updateButtons(v);
    rescale(v);
  }

  function updateHeader(v) {
    if (!v.dom) return;
    const info = termInfo(v.id);
    const name = info?.title || info?.command || '';
    v.dom.title.replaceChildren(
      v.id,
      el('span', { class: 'sub', text: [name, `${v.cols}×${v.rows}`].filter(Boolean).join(' · ') }),
    );
    v.dom.section.setAttribute('aria-label', `Terminal ${v.id}${name ? `: ${name}` : ''}`);
  }

  function updateButtons(v) {
    if (!v.dom) return;
    const held = api.held[v.id] || { by: termInfo(v.id)?.held_by ?? null, you: false };
    const canInput = api.scope === 'input' && !v.ended;
    const { take, release, fit, holder, section } = v.dom;
    take.hidden = !canInput || held.you;
    release.hidden = !canInput || !held.you;
    fit.hidden = !canInput || !held.you;
    take.setAttribute('aria-label', `Take over (${v.id})`);
    release.setAttribute('aria-label', `Hand back (${v.id})`);
    fit.setAttribute('aria-label', `Fit to window (${v.id})`);
    if (held.you) {
      holder.textContent = 'you hold it';
      holder.title = 'What you type goes to the terminal; Hand back gives it to the agents again.';
      holder.className = 'holder you';
    } else if (held.by) {
      holder.textContent = `held by ${held.by}`;
      holder.title = '';
      holder.className = 'holder other';
    } else {
      holder.textContent = '';
      holder.className = 'holder';
      holder.title = '';
    }
    section.classList.toggle('held-by-you', held.you && !v.ended);
    const typing = held.you && !v.ended;
    const wasTyping = !v.term.options.disableStdin;
    v.term.options.disableStdin = !typing;
    if (typing && !wasTyping) v.term.focus();
  }

  function notice(v, text, kind = '', sticky = false) {
    const box = v.dom.noticeBox;
    box.textContent = text;
    box.className = `notice ${kind}`;
    box.hidden = false;
    clearTimeout(v.dom.noticeTimer);
    if (!sticky && !v.ended) {
      // A true timer: how long a notice stays.
      v.dom.noticeTimer = setTimeout(() => {
        box.hidden = true;
      }, NOTICE_MS);
    }
  }

  // The terminal's own size in CSS pixels (before the transform), with room
  // for the scrollbar of its scrollback.
  function naturalSize(v) {
    const xterm = v.term.element;
    const screen = xterm?.querySelector('.xterm-screen');
    const viewport = xterm?.querySelector('.xterm-viewport');
    if (!screen || !screen.offsetWidth) return null;
    const bar = viewport ? viewport.offsetWidth - viewport.clientWidth : 0;
    const pad = `${Math.max(bar, 0)}px`;
    if (xterm.style.paddingRight !== pad) xterm.style.paddingRight = pad;
    return { width: screen.offsetWidth + Math.max(bar, 0), height: screen.offsetHeight, screen };
  }

  // The most room a view's screen may take: its column's width, and the
  // height of the main area less the view's bar.
  function room(v) {
    const main = $('views');
    const style = getComputedStyle(main);
    const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
    const above = v.dom.screen.getBoundingClientRect().top - v.dom.section.getBoundingClientRect().top;
    return {
      width: v.dom.screen.clientWidth - 2 * INSET,
      height: Math.max(main.clientHeight - padding - above - 2 - 2 * INSET, 80),
    };
  }

  // Scaled with a CSS transform to fit its box: the pane is never resized.
  function rescale(v) {
    if (!v.dom || v.disposed) return;
    const size = naturalSize(v);
    if (!size) return;
    const space = room(v);
    const scale = Math.min(1, space.width / size.width, space.height / size.height);
    v.scale = scale;
    v.dom.scaler.style.transform = `translate(${INSET}px, ${INSET}px) scale(${scale})`;
    v.dom.screen.style.height = `${Math.ceil(size.height * scale) + 2 * INSET}px`;
  }

  // While held: resize the pane's window to what fits this view unscaled.
  function fitToWindow(v) {
    const size = naturalSize(v);
    if (!size) return;
    const space = room(v);
    const cellWidth = size.screen.offsetWidth / v.term.cols;
    const cellHeight = size.screen.offsetHeight / v.term.rows;
    const bar = size.width - size.screen.offsetWidth;
    const cols = Math.max(2, Math.floor((space.width - bar) / cellWidth));
    const rows = Math.max(2, Math.floor(space.height / cellHeight));
    send({ op: 'fit', id: v.id, cols, rows });
  }

  window.addEventListener('resize', () => {
    for (const v of Object.values(views)) rescale(v);
  });
  document.fonts?.ready.then(() => {
    for (const v of Object.values(views)) rescale(v);
  });

  // ------------------------------------------------------------ reading a terminal

  function rowsOf(id, first, last) {
    const v = views[String(id)];
    if (!v) throw new Error(`no view of ${id}`);
    const buffer = v.term.buffer.active;
    const rows = [];
    for (let i = first(buffer, v.term); i < last(buffer, v.term); i += 1) {
      // xterm.js trims only cells never written; spaces written are trimmed too.
      rows.push((buffer.getLine(i)?.translateToString(true) ?? '').replace(/ +$/, ''));
    }
    return rows;
  }

  function screenText(id) {
    return rowsOf(
      id,
      (buffer) => buffer.baseY,
      (buffer, term) => buffer.baseY + term.rows,
    );
  }

  function bufferText(id) {
    return rowsOf(
      id,
      () => 0,
      (buffer) => buffer.length,
    );
  }

  // ------------------------------------------------------------ the sidebar

  function personName(p) {
    if (typeof p === 'string') return p;
    if (p && typeof p === 'object') return p.name ?? p.actor ?? p.user ?? p.client ?? p.tty ?? JSON.stringify(p);
    return String(p);
  }

  function paneItem(t) {
    const people = Array.isArray(t.people) ? t.people : [];
    const badges = [];
    if (people.length) {
      badges.push(
        el('span', {
          class: 'badge people',
          title: people.map(personName).join(', '),
          text: `${people.length} watching`,
        }),
      );
    }
    if (t.held_by) badges.push(el('span', { class: 'badge held', text: `held by ${t.held_by}` }));
    if (t.attention > 0) {
      badges.push(el('span', { class: 'badge attention', text: `${t.attention} attention` }));
    }
    if (t.dead) badges.push(el('span', { class: 'badge dead', text: 'dead' }));
    const label = [
      `pane ${t.pane ?? t.id}`,
      t.title,
      t.command && `running ${t.command}`,
      `${t.width}×${t.height}`,
      people.length && `${people.length} watching: ${people.map(personName).join(', ')}`,
      t.held_by && `held by ${t.held_by}`,
      t.attention > 0 && `${t.attention} attention`,
      t.dead && 'dead',
    ]
      .filter(Boolean)
      .join(', ');
    const button = el(
      'button',
      {
        type: 'button',
        class: `pane${t.dead ? ' dead' : ''}${views[t.id] ? ' open' : ''}`,
        'data-id': t.id,
        'data-label': label,
        'aria-label': views[t.id] ? `${label}, open` : label,
        title: t.cwd || undefined,
        onclick: () => {
          if (views[t.id]) {
            views[t.id].dom.section.scrollIntoView({ block: 'nearest' });
            views[t.id].dom.section.focus({ preventScroll: true });
          } else {
            open(t.id);
          }
        },
      },
      el(
        'span',
        { class: 'line1' },
        el('span', { class: 'pane-id', text: t.pane ?? t.id }),
        el('span', { class: 'title', text: t.title || t.command || '' }),
      ),
      el(
        'span',
        { class: 'line2' },
        el('span', { class: 'command', text: t.command || '' }),
        el('span', { class: 'size', text: `${t.width}×${t.height}` }),
        ...badges,
      ),
    );
    return el('li', {}, button);
  }

  // host > session > window > pane, in the server's order.
  function group(list, key) {
    const groups = new Map();
    for (const item of list) {
      const k = key(item);
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(item);
    }
    return groups;
  }

  function renderSidebar() {
    const box = $('hosts');
    const focused = document.activeElement?.closest?.('#hosts .pane')?.dataset.id;
    const hostInfo = new Map(api.hosts.map((h) => [h.host, h]));
    const byHost = group(api.terminals, (t) => t.host);
    for (const h of api.hosts) if (!byHost.has(h.host)) byHost.set(h.host, []);
    const sections = [];
    for (const [host, terminals] of byHost) {
      const info = hostInfo.get(host);
      const heading = el(
        'h3',
        {},
        host,
        info && info.reachable === false
          ? el('span', { class: 'error', text: `unreachable${info.error ? `: ${info.error}` : ''}` })
          : null,
      );
      const sessions = el('ul', { class: 'sessions' });
      for (const [session, inSession] of group(terminals, (t) => t.session)) {
        const windows = el('ul', { class: 'windows' });
        for (const [, inWindow] of group(inSession, (t) => t.window)) {
          const name = `window ${inWindow[0].window_name || inWindow[0].window}`;
          windows.append(
            el(
              'li',
              {},
              el('div', { class: 'window-name', text: name }),
              el('ul', { class: 'panes', 'aria-label': `panes of ${name}` }, ...inWindow.map(paneItem)),
            ),
          );
        }
        sessions.append(el('li', {}, el('div', { class: 'session-name', text: `session ${session}` }), windows));
      }
      if (!terminals.length) sessions.append(el('li', { class: 'nothing', text: 'no terminals' }));
      sections.push(el('section', { class: 'host', 'aria-label': `host ${host}` }, heading, sessions));
    }
    if (!sections.length) sections.push(el('p', { class: 'nothing', text: 'No terminals yet.' }));
    box.replaceChildren(...sections);
    if (focused) box.querySelector(`.pane[data-id="${CSS.escape(focused)}"]`)?.focus();
  }

  function markOpenInSidebar() {
    for (const button of document.querySelectorAll('#hosts .pane')) {
      const open = Boolean(views[button.dataset.id]);
      button.classList.toggle('open', open);
      button.setAttribute('aria-label', open ? `${button.dataset.label}, open` : button.dataset.label);
    }
  }

  // ------------------------------------------------------------ start

  signIn().then(
    (session) => {
      api.name = session.name ?? null;
      api.scope = session.scope ?? null;
      showWho();
      connect();
      const pane = query.get('pane');
      if (pane) open(pane);
    },
    (error) => signedOut(error.message),
  );
})();
