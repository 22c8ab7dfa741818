// The first-run view at the top of an empty log: which model runs and,
// with only the offline model, directives to try and what to do for a real
// one. It goes once the conversation has a message.
import type { Welcome } from "../protocol";
import { el, type Post } from "./dom";

export interface WelcomeDeps {
	log: HTMLElement;
	post: Post;
	/** A directive to try, put in the message box in place of what is there. */
	putInComposer(text: string): void;
}

export class WelcomeView {
	/** What the extension last said about the model and keys. */
	private welcome: Welcome | undefined;

	constructor(private readonly d: WelcomeDeps) {}

	set(w: Welcome): void {
		this.welcome = w;
		this.show();
	}

	hide(): void {
		document.getElementById("welcome")?.remove();
	}

	/** Shown while the log has no message. */
	show(): void {
		const { log, post } = this.d;
		this.hide();
		if (!this.welcome || log.querySelector(".msg")) return;
		const w = this.welcome;
		const box = el("section", "welcome");
		box.id = "welcome";
		box.setAttribute("aria-labelledby", "welcome-title");
		const h = el("h2", undefined, "Welcome to gopi");
		h.id = "welcome-title";
		box.append(h);
		const model = el("p", "welcome-model");
		model.append(w.model ? "Model: " : "No model is selected yet.");
		if (w.model) model.append(el("code", undefined, w.model));
		box.append(model);
		if (w.offline) {
			box.append(
				el("p", "welcome-hint", "No API key was found, so gopi runs its offline model, which follows directives instead of thinking. Try one:"),
			);
			const tries = el("div", "welcome-tries");
			for (const t of ["bash: ls", "write: notes.txt :: hello", "think: a plan"]) {
				const b = el("button", "welcome-try", t);
				b.type = "button";
				b.title = "Put this in the message box";
				b.onclick = () => this.d.putInComposer(t);
				tries.append(b);
			}
			box.append(tries);
			box.append(el("p", "welcome-hint", "For a real model, add a key or pick a model that has one."));
			const actions = el("div", "welcome-actions");
			const key = el("button", "welcome-button primary", "Add an API key");
			key.type = "button";
			key.id = "welcome-set-key";
			key.onclick = () => post({ type: "setKey" });
			const sw = el("button", "welcome-button", "Switch model");
			sw.type = "button";
			sw.id = "welcome-switch-model";
			sw.onclick = () => post({ type: "switchModel" });
			actions.append(key, sw);
			box.append(actions);
		} else {
			box.append(
				el("p", "welcome-hint", "Ask about this workspace or give gopi a task. Type / for commands, @ to attach a file, @selection, @problems, @terminal or @git."),
			);
			if (w.providers.length) box.append(el("p", "welcome-providers", `Keys found for: ${w.providers.join(", ")}.`));
		}
		log.prepend(box);
	}
}
