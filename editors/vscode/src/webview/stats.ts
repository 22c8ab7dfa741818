// The session's statistics (pi's get_session_stats) as a small table in
// the chat. Every value is set as text.
import type { ContextUsage, SessionStats, TokenStats } from "../gen/protocol";

type Stats = Partial<SessionStats>;

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** 1234 as "1,234", 56789 as "56.8k", 1234567 as "1.23M". */
export function tokens(n: number | undefined): string {
	if (n === undefined) return "–";
	if (n < 10_000) return n.toLocaleString("en-US");
	if (n < 1_000_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
	return `${(n / 1_000_000).toFixed(2).replace(/\.?0+$/, "")}M`;
}

function cost(v: unknown): string {
	const n = num(v);
	if (n === undefined) return "–";
	if (n === 0) return "$0";
	return n < 0.01 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`;
}

export function statsRows(s: Stats): [string, string][] {
	const t: Partial<TokenStats> = s.tokens ?? {};
	const c: ContextUsage | undefined = s.contextUsage ?? undefined;
	const rows: [string, string][] = [];
	const user = num(s.userMessages);
	const asst = num(s.assistantMessages);
	const total = num(s.totalMessages);
	rows.push(["Messages", `${user ?? "–"} from you · ${asst ?? "–"} from gopi${total !== undefined ? ` · ${total} in all` : ""}`]);
	const calls = num(s.toolCalls);
	const results = num(s.toolResults);
	rows.push(["Tool calls", `${calls ?? "–"}${results !== undefined && results !== calls ? ` (${results} results)` : ""}`]);
	const parts = [`${tokens(num(t.input))} in`, `${tokens(num(t.output))} out`];
	if (num(t.cacheRead)) parts.push(`${tokens(num(t.cacheRead))} cache read`);
	if (num(t.cacheWrite)) parts.push(`${tokens(num(t.cacheWrite))} cache write`);
	rows.push(["Tokens", `${tokens(num(t.total))} (${parts.join(" · ")})`]);
	rows.push(["Cost", cost(s.cost)]);
	if (c) {
		const pct = num(c.percent);
		const used = num(c.tokens);
		const win = num(c.contextWindow);
		rows.push([
			"Context",
			used === undefined ? `unknown of ${tokens(win)}` : `${tokens(used)} of ${tokens(win)}${pct !== undefined ? ` (${pct < 1 ? pct.toFixed(1) : Math.round(pct)}%)` : ""}`,
		]);
	}
	if (typeof s.sessionId === "string") rows.push(["Session", s.sessionId]);
	if (typeof s.sessionFile === "string") rows.push(["File", s.sessionFile]);
	return rows;
}

/** The card: a captioned table; the session file's full path is its cell's title. */
export function statsCard(s: Stats): HTMLElement {
	const card = document.createElement("section");
	card.className = "stats-card";
	card.setAttribute("aria-label", "Session statistics");
	const table = document.createElement("table");
	const cap = document.createElement("caption");
	cap.textContent = "Session statistics";
	table.append(cap);
	for (const [k, v] of statsRows(s)) {
		const tr = document.createElement("tr");
		const th = document.createElement("th");
		th.scope = "row";
		th.textContent = k;
		const td = document.createElement("td");
		td.textContent = v;
		td.title = v;
		if (k === "File" || k === "Session") td.className = "stats-id";
		tr.dataset.stat = k.toLowerCase().replace(/\s+/g, "-");
		tr.append(th, td);
		table.append(tr);
	}
	const c = s.contextUsage;
	const pct = num(c?.percent);
	if (pct !== undefined) {
		const meter = document.createElement("div");
		meter.className = "stats-meter";
		meter.setAttribute("role", "meter");
		meter.setAttribute("aria-label", "Context window used");
		meter.setAttribute("aria-valuemin", "0");
		meter.setAttribute("aria-valuemax", "100");
		meter.setAttribute("aria-valuenow", String(Math.round(pct)));
		const bar = document.createElement("div");
		bar.style.width = `${Math.min(100, Math.max(0, pct))}%`;
		if (pct >= 90) meter.classList.add("high");
		else if (pct >= 70) meter.classList.add("mid");
		meter.append(bar);
		card.append(table, meter);
	} else card.append(table);
	return card;
}
