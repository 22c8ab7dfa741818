// The run's status line: retries, then a failure with Retry.
//
// One line per retry cycle, updated in place: created on the first
// auto_retry_start (or by the failed reply before it), it counts down to the
// next attempt, goes when an attempt succeeds, and turns into an error with
// a Retry button when gopi gives up (or a reply fails with no retry). The
// line lives in the log, after the reply it belongs to.
import type { AssistantMessage } from "../gen/protocol";
import { el, type NextId, type Post } from "./dom";

export interface RunLineDeps {
	/** The log the line is written into. */
	log: HTMLElement;
	post: Post;
	nextId: NextId;
	scrollDown: () => void;
}

interface Line {
	el: HTMLElement;
	state: "retrying" | "failed";
	timer?: ReturnType<typeof setInterval>;
}

const FAILED = "The model call failed.";

/** The first line of an error, cut to a readable length; the whole of it is the line's title. */
function errorSummary(text: string): string {
	const first = text.trim().split("\n")[0] ?? "";
	return first.length > 160 ? `${first.slice(0, 157)}…` : first;
}

function setError(line: Line, error: string): void {
	const err = line.el.querySelector(".run-status-error") as HTMLElement;
	err.textContent = errorSummary(error);
	line.el.title = error.trim();
}

export class RunLine {
	/** The line of the current cycle, until it is resolved or retired. */
	private line: Line | undefined;

	constructor(private readonly d: RunLineDeps) {}

	/** A new conversation: the line is forgotten (the log it was in is cleared). */
	reset(): void {
		if (this.line?.timer) clearInterval(this.line.timer);
		this.line = undefined;
	}

	/** auto_retry_start: the attempt, and a countdown to it. */
	retrying(attempt: number, max: number, delayMs: number, error: string): void {
		const line = this.lineEl();
		line.state = "retrying";
		line.el.className = "run-status retrying";
		line.el.setAttribute("role", "status");
		line.el.querySelector(".retry")?.remove();
		(line.el.querySelector(".run-status-text") as HTMLElement).textContent = `Retrying (attempt ${attempt} of ${max})`;
		setError(line, error);
		const cd = line.el.querySelector(".run-status-countdown") as HTMLElement;
		const until = Date.now() + delayMs;
		const tick = () => {
			const left = Math.ceil((until - Date.now()) / 1000);
			cd.textContent = left > 0 ? `in ${left} s` : "now…";
			if (left <= 0 && line.timer) {
				clearInterval(line.timer);
				line.timer = undefined;
			}
		};
		tick();
		if (delayMs > 0) line.timer = setInterval(tick, 250);
		this.d.scrollDown();
	}

	/** The run failed: the line turns into an error (or a warning) with Retry. */
	failed(error: string, level: "error" | "warning" = "error"): void {
		// A failure after an earlier, unanswered one: the older line keeps its
		// text but loses its button.
		if (this.line?.state === "failed") this.retire(this.line, "stale");
		const line = this.lineEl();
		line.state = "failed";
		line.el.className = `run-status failed ${level}`;
		line.el.setAttribute("role", "alert");
		(line.el.querySelector(".run-status-text") as HTMLElement).textContent = level === "error" ? "Failed:" : "";
		(line.el.querySelector(".run-status-countdown") as HTMLElement).textContent = "";
		setError(line, error);
		if (!line.el.querySelector(".retry")) {
			const b = el("button", "retry", "Retry");
			b.type = "button";
			b.title = "Send the last prompt again";
			b.setAttribute("aria-describedby", line.el.id);
			b.onclick = () => {
				if (b.getAttribute("aria-disabled") === "true") return;
				b.setAttribute("aria-disabled", "true");
				this.d.post({ type: "retry" });
			};
			line.el.append(b);
		}
		this.d.scrollDown();
	}

	/** auto_retry_end without success: the final error, else the last one the line showed. */
	gaveUp(finalError: string | undefined): void {
		this.failed(String(finalError ?? (this.line?.el.title || FAILED)));
	}

	/** A reply went through: a retry cycle's line goes, a failure's line is marked resolved. */
	resolve(): void {
		if (!this.line) return;
		if (this.line.state === "retrying") {
			if (this.line.timer) clearInterval(this.line.timer);
			this.line.el.remove();
			this.line = undefined;
		} else this.retire(this.line, "resolved");
	}

	/** A streamed reply ended: a failure shows (in the retry line while gopi still retries); a success resolves. */
	replyEnded(m: AssistantMessage): void {
		if (m.stopReason === "error") {
			const error = m.errorMessage ?? FAILED;
			if (this.line?.state === "retrying") setError(this.line, error);
			else this.failed(error);
		} else if (m.stopReason !== "aborted") this.resolve();
	}

	/** A reply of the session's history: a failed one is one static line per run of the same error. */
	replyInHistory(m: AssistantMessage): void {
		if (m.stopReason !== "error") {
			this.resolve();
			return;
		}
		const error = m.errorMessage ?? FAILED;
		const last = this.d.log.lastElementChild as HTMLElement | null;
		if (last?.classList.contains("run-status") && last.title === error.trim()) return;
		// Only the newest can still be retried: an older line loses its button when the next comes.
		this.failed(error);
	}

	/** The run settled while a retry was still counting down: stopped, or given up. */
	settled(aborted: boolean): void {
		if (this.line?.state !== "retrying") return;
		if (aborted) {
			(this.line.el.querySelector(".run-status-text") as HTMLElement).textContent = "Retrying stopped:";
			(this.line.el.querySelector(".run-status-countdown") as HTMLElement).textContent = "";
			this.retire(this.line, "stale");
		} else this.failed(this.line.el.title || FAILED);
	}

	private lineEl(): Line {
		if (this.line) {
			if (this.line.timer) clearInterval(this.line.timer);
			this.line.timer = undefined;
			return this.line;
		}
		const e = el("div", "run-status");
		e.id = this.d.nextId("run-status");
		e.append(el("span", "run-status-icon"), el("span", "run-status-text"), el("span", "run-status-countdown"), el("span", "run-status-error"));
		(e.firstChild as HTMLElement).setAttribute("aria-hidden", "true");
		(e.querySelector(".run-status-countdown") as HTMLElement).setAttribute("aria-hidden", "true");
		this.d.log.append(e);
		this.line = { el: e, state: "retrying" };
		return this.line;
	}

	/** Stops tracking a line: "resolved" dims it (a later run went through), "stale" just drops its button. */
	private retire(line: Line, how: "resolved" | "stale"): void {
		if (line.timer) clearInterval(line.timer);
		line.el.querySelector(".retry")?.remove();
		line.el.removeAttribute("role");
		line.el.classList.add(how);
		if (how === "resolved") {
			line.el.classList.remove("error", "warning");
			(line.el.querySelector(".run-status-text") as HTMLElement).textContent = "Failed earlier:";
		}
		if (this.line === line) this.line = undefined;
	}
}
