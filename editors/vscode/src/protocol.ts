// Messages between the extension and the chat webview. Both sides import
// this file; esbuild bundles it into each. What gopi sends (events,
// messages, statistics) is typed in gen/protocol.ts, generated from
// core/api (make generate).
import type { Event, ImageContent, Message, SessionStats } from "./gen/protocol";

/** An image the composer attaches: gopi's image block without its type; data is base64. */
export type ImageAttachment = Omit<ImageContent, "type">;

/** An entry of / completion: a prompt template, skill or extension command from gopi, or one of the extension's own actions. */
export interface CommandItem {
	name: string;
	description?: string;
	/** "prompt" | "skill" | "extension" (gopi's get_commands), or "action": the extension runs it itself. */
	source?: string;
}

/** How a pending approval ended. */
export type ApprovalOutcome = "accepted" | "always" | "rejected" | "aborted" | "timedOut";

/** The first-run view: which model runs and what to do without a key. */
export interface Welcome {
	/** provider/id of the model gopi runs, if any. */
	model?: string;
	/** Only the offline faux model has credentials. */
	offline: boolean;
	/** Providers with credentials. */
	providers: string[];
}

/** What the extension posts to the webview. */
export type ToWebview =
	| { type: "event"; event: Event }
	| { type: "history"; messages: Message[] }
	| { type: "reset"; label: string }
	| { type: "commands"; items: CommandItem[] }
	| { type: "files"; query: string; items: string[] }
	| { type: "insert"; text: string; replace?: boolean }
	| { type: "widget"; key: string; lines: string[] | null; placement?: string }
	| { type: "title"; title: string }
	| { type: "notice"; level: "info" | "warning" | "error"; text: string; action?: "restart" | "retry" }
	/** The files a run changed; run names that run's snapshots (openChange sends it back). */
	| { type: "changes"; run: number; files: string[] }
	/**
	 * gopi asks before a tool runs: the tool card of toolCallId (or a card of
	 * its own when none matches) shows the question and a button per option.
	 */
	| {
			type: "approval";
			id: string;
			toolCallId?: string;
			toolName: string;
			title: string;
			options: { answer: string; label: string }[];
			/** gopi's sandbox stopped the call: the question is whether it runs once outside. */
			escape?: boolean;
	  }
	/** The question was answered (here or elsewhere) or withdrawn: its buttons go. */
	| { type: "approvalDone"; id: string; outcome: ApprovalOutcome }
	| { type: "welcome"; welcome: Welcome }
	/** Session statistics (pi's get_session_stats), shown in the chat. */
	| { type: "stats"; stats: Partial<SessionStats> };

/** What the webview posts to the extension. */
export type FromWebview =
	| { type: "ready" }
	| { type: "send"; text: string; images: ImageAttachment[]; mode: "prompt" | "steer" | "followUp" }
	| { type: "abort" }
	| { type: "dequeue"; kind: "steering" | "followUp"; index: number }
	/** @ completion: files matching query, and the mentions (@selection, @problems, …). */
	| { type: "complete"; query: string }
	| { type: "openLink"; href: string }
	| { type: "openFile"; path: string; line?: number }
	| { type: "openChange"; path: string; run: number }
	/** Every file one run changed, in one multi-file diff. */
	| { type: "reviewRun"; run: number }
	| { type: "copy"; text: string }
	| { type: "restart" }
	/** Rewind to here: the checkpoint before the user message sent at timestamp (the message's own). */
	| { type: "rewind"; timestamp: number }
	/** Runs one of the extension's own / actions (source "action"), with what followed its name. */
	| { type: "action"; name: string; args: string }
	/** An answer to a pending approval, from its card. */
	| { type: "approve"; id: string; answer: string }
	/** Retry the last prompt after a failure. */
	| { type: "retry" }
	/** The welcome view's buttons. */
	| { type: "setKey" }
	| { type: "switchModel" };
