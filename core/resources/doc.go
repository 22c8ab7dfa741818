// Package resources finds what shapes the agent besides the conversation:
// the system prompt (ours, from embedded templates), the context files
// (AGENTS.md or CLAUDE.md) of the agent directory and of the working
// directory and its ancestors, prompt templates ("/name args") and skills
// ("/skill:name", listed in the system prompt). Start with
// [LoadContextFiles] and [BuildSystemSections]; then [LoadTemplates] with
// [ExpandTemplate], and [LoadSkills] with [ExpandSkill] and
// [FormatSkillsForPrompt].
package resources
