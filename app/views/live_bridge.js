// The live map's bridge (app/views/live_bridge.py). A Streamlit slider changes its <input>'s value attribute at
// every step of a drag but tells the page (and the server) only on release; the map's Vega params are bound to
// those inputs (app/render/map_live.py) and listen to the "elmo-live" event, which this dispatches whenever such
// a value moves. Nothing is sent to the server from here.
const EVENT = "elmo-live";

export default function (component) {
  const selectors = (component.data && component.data.selectors) || [];
  const watched = window.__elmoLiveWatched || (window.__elmoLiveWatched = new WeakSet());
  for (const selector of selectors) {
    const input = document.querySelector(selector);
    if (!input || watched.has(input)) continue;
    watched.add(input);
    new MutationObserver(() => input.dispatchEvent(new Event(EVENT))).observe(input, {
      attributes: true,
      attributeFilter: ["value"],
    });
  }
}
