// Screenshots of a dtsim timeline in two offline viewers, driven by playwright-core in headless Chromium: the
// Perfetto UI and the legacy trace viewer of chrome://tracing (Catapult), both from the Perfetto UI build that
// scripts/timeline_screenshot.sh installs from npm and serves over HTTP on 127.0.0.1. Not used by the tests or CI.
// usage: node timeline_screenshot.js BASE_URL TRACE_NAME PERFETTO_PNG TRACING_PNG
'use strict';
const { chromium } = require('playwright-core');

const [base, trace, perfettoPng, tracingPng] = process.argv.slice(2);
if (!tracingPng) {
  console.error('usage: node timeline_screenshot.js BASE_URL TRACE_NAME PERFETTO_PNG TRACING_PNG');
  process.exit(2);
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  const fail = (what) => (e) => { console.error(`timeline_screenshot: ${what}: ${e.message}`); };
  try {
    // Perfetto: index.html opens the trace from its URL; wait until the trace processor has loaded it and the
    // process track groups exist, then expand them all.
    const p = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    p.on('pageerror', fail('Perfetto UI'));
    await p.goto(`${base}/index.html`);
    await p.waitForFunction(() => window.globals && globals.state && globals.state.engines &&
        Object.values(globals.state.engines).some((e) => e.ready) &&
        Object.keys(globals.state.trackGroups || {}).length > 0, null, { timeout: 120000 });
    await p.evaluate(() => {
      for (const g of Object.values(globals.state.trackGroups))
        if (g.collapsed) globals.dispatch(Actions.toggleTrackGroupCollapsed({ trackGroupId: g.id }));
    });
    await p.waitForTimeout(3000); // the tracks' slices load asynchronously from the trace processor
    // This build's track shells are empty (it was made for embedding): write each track's name into its shell, in
    // the order the page lays them out (each process's tracks in turn, its summary track not drawn): "rank 0 / s0"
    // from the trace's process and thread names, the fabric's counters by their own names.
    await p.evaluate(() => {
      const st = globals.state, labels = [];
      for (const g of Object.values(st.trackGroups)) {
        const proc = g.name.replace(/ \d+$/, '');
        for (const id of g.tracks) {
          const name = st.tracks[id].name.replace(/ \d+$/, '');
          if (/ summary$/.test(st.tracks[id].name)) continue;
          labels.push(proc.startsWith('fabric') ? name : `${proc} / ${name}`);
        }
      }
      [...document.querySelectorAll('.track-shell')].forEach((e, i) => {
        if (i >= labels.length) return;
        e.style.cssText += ';font:12px sans-serif;padding:4px 6px;box-sizing:border-box;color:#333;' +
                           'overflow:hidden;white-space:nowrap';
        e.textContent = labels[i];
      });
    });
    await p.waitForTimeout(300);
    await p.screenshot({ path: perfettoPng });

    // chrome://tracing's viewer: x-profiling-view takes the trace's text.
    const t = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    t.on('pageerror', fail('trace viewer'));
    await t.goto(`${base}/assets/catapult_trace_viewer.html`);
    await t.waitForFunction(() => document.querySelector('x-profiling-view') &&
        document.querySelector('x-profiling-view').setActiveTrace, null, { timeout: 60000 });
    await t.evaluate(async (name) => {
      const text = await (await fetch('/' + name)).text();
      document.querySelector('x-profiling-view').setActiveTrace(name, text);
    }, trace);
    await t.waitForTimeout(4000);
    // the viewer warns that it runs on a Web Components polyfill: hide the banner
    await t.evaluate(() => {
      const walk = (n) => {
        if (n.shadowRoot) walk(n.shadowRoot);
        for (const c of n.children || []) walk(c);
        if (n.tagName === 'BUTTON' && n.textContent.trim() === 'Hide') n.click();
      };
      walk(document.documentElement);
    });
    await t.waitForTimeout(500);
    await t.screenshot({ path: tracingPng });
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(`timeline_screenshot: ${e.message}`); process.exit(1); });
