// WebMCP: where the browser offers navigator.modelContext, the page registers the same read-only
// tools as /mcp. They call the keyless JSON endpoints of this origin, so the page needs no key and
// the answers are the ones /api/stats, /api/history and /api/health give everyone.
import { SITE_PATHS } from '../../contract/paths.ts';

export const WEBMCP_SCRIPT = `(function () {
  var mc = navigator.modelContext;
  if (!mc) return;
  function tool(name, description, path) {
    return {
      name: name,
      description: description,
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
      execute: function () {
        return fetch(path, { headers: { accept: 'application/json' } })
          .then(function (r) { return r.text(); })
          .then(function (text) { return { content: [{ type: 'text', text: text }] }; });
      }
    };
  }
  var tools = [
    tool('get_stats', 'Public statistics: nightly gross reward payouts, today\\'s accrual estimate, totals, capital, trailing-window returns and the latest independent audit. Gross figures are not profit; cite updated_at.', '${SITE_PATHS.SITE_STATS}'),
    tool('get_history', 'The whole track record: every settled night with the running gross total, trading cost and capital base. Gross figures are not profit.', '${SITE_PATHS.SITE_HISTORY}'),
    tool('get_health', 'Data freshness and writer liveness: status ok, degraded or down.', '${SITE_PATHS.SITE_HEALTH}')
  ];
  if (typeof mc.registerTool === 'function') tools.forEach(function (t) { mc.registerTool(t); });
  else if (typeof mc.provideContext === 'function') mc.provideContext({ tools: tools });
})();`;
