-- The plugin's own slash commands: `/new`, `/compact`, `/model x`, ... typed
-- in the prompt run the matching :Gopi command instead of going to the model
-- (gopi.complete lists them). Any other `/name` goes to gopi, which expands
-- prompt templates, skills and extensions' commands.
local M = {}

--- name -> function(args): what each built-in does.
local function handlers()
  local g = require("gopi")
  return {
    help = M.help,
    new = g.new_session,
    resume = g.sessions,
    sessions = g.sessions,
    fork = g.fork,
    clone = g.clone,
    rename = g.rename,
    model = g.model,
    thinking = g.thinking,
    compact = g.compact,
    export = g.export,
    changes = g.changes,
    rewind = g.rewind,
    abort = g.abort,
    restart = g.restart,
    log = g.log,
    mcp = g.mcp,
  }
end

--- Runs text when it is a built-in slash command (one line, `/name args`);
--- true when it was one.
function M.run(text)
  local name, args = vim.trim(text or ""):match("^/([%w_-]+)%s*(.-)$")
  if not name or text:find("\n", 1, true) then
    return false
  end
  local fn = handlers()[name]
  if not fn then
    return false
  end
  fn(args)
  return true
end

--- /help: the plugin's slash commands, and what else `/` offers.
function M.help()
  local lines = { "gopi: slash commands run in the editor:" }
  for _, c in ipairs(require("gopi.complete").builtins) do
    table.insert(lines, string.format("  /%-10s %s", c.name, (c.description:gsub("^gopi%.nvim: ", ""))))
  end
  table.insert(lines, "Other / names go to gopi (prompt templates, skills, extensions' commands); <C-x><C-u> completes them. :help gopi-slash")
  vim.notify(table.concat(lines, "\n"), vim.log.levels.INFO)
end

return M
