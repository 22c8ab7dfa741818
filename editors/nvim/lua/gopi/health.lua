-- :checkhealth gopi
local M = {}

function M.check()
  local h = vim.health
  h.start("gopi")
  if vim.fn.has("nvim-0.10") == 1 then
    h.ok("Neovim " .. tostring(vim.version()))
  else
    h.error("Neovim " .. tostring(vim.version()) .. ": gopi.nvim needs 0.10 or newer")
  end
  local config = require("gopi.config")
  local review = config.options.review
  if review == "tab" or review == "inline" then
    h.ok("review: " .. review)
  else
    h.warn(string.format('review = %s: neither "tab" nor "inline"; edits are reviewed in a tab', vim.inspect(review)), { "See :help gopi-review-inline" })
  end
  local sandbox = config.options.sandbox
  if sandbox == nil then
    h.ok("sandbox: not set, gopi decides (its settings.json, else its default)")
  elseif config.valid_sandbox(sandbox) then
    h.ok(string.format("sandbox: %s (setup)", sandbox))
  else
    h.error(
      string.format('sandbox = %s: none of "off", "read-only", "workspace-write"; gopi does not start', vim.inspect(sandbox)),
      { "See :help gopi-sandbox" }
    )
  end
  local bin, how = require("gopi.client").binary(config.options)
  if not bin then
    h.error("gopi binary " .. how, {
      "Install the release: curl -fsSL https://github.com/gopi-dev/gopi/releases/latest/download/install.sh | sh (into ~/.local/bin, found there)",
      "Or in the gopi repository run `make build` (or editors/nvim/build.sh): the plugin finds its bin/gopi",
      "Or put gopi on $PATH, or set `cmd` in require('gopi').setup()",
    })
    return
  end
  h.ok(string.format("binary: %s (from %s)", bin, how))
  local out = vim.system({ bin, "--version" }, { text = true }):wait(10000)
  if out.code == 0 then
    -- "gopi 0.1.0", then the commit, the build date and the Go release.
    local lines = vim.split(vim.trim(out.stdout or ""), "\n")
    h.ok("version: " .. table.concat(lines, ", "))
  else
    h.error("`" .. bin .. " --version` failed: " .. vim.trim((out.stderr or "") .. (out.stdout or "")))
    return
  end
  local chat = require("gopi.chat").current()
  local c = chat:running()
  local started = false
  if not c then
    c = chat:start({})
    started = true
  end
  if not c then
    h.error("gopi did not start; :GopiLog has the details")
    return
  end
  local models, err = c:call("get_available_models", {}, 10000)
  if not models then
    h.error("handshake: " .. tostring(err))
    return
  end
  h.ok("handshake: gopi " .. (c.version or "") .. " answered")
  local seen, providers = {}, {}
  for _, m in ipairs(models.models or {}) do
    if not seen[m.provider] then
      seen[m.provider] = true
      table.insert(providers, m.provider)
    end
  end
  table.sort(providers)
  if #providers == 1 and providers[1] == "faux" then
    h.warn("providers with credentials: faux only (the offline model)", { "Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, or `env` in setup()" })
  else
    h.ok("providers with credentials: " .. table.concat(providers, ", "))
  end
  M.sandbox(h, c)
  -- A gopi started just for this check has not connected its servers yet.
  require("gopi.mcp").check(h, not started and c or nil)
  if started then
    chat:stop()
  end
end

--- What gopi reports of the sandbox the model's commands run in.
function M.sandbox(h, c)
  local st, err = c:call("get_state", {}, 10000)
  if not st then
    h.warn("the sandbox in force: get_state failed: " .. tostring(err))
    return
  end
  local sb = type(st.sandbox) == "table" and st.sandbox or nil
  if not sb then
    h.info('the sandbox in force: none; the model\'s commands run with your rights (sandbox = "workspace-write" confines them)')
  elseif (type(sb.problem) == "string" and sb.problem ~= "") or #(sb.layers or {}) == 0 then
    h.warn(
      string.format(
        "the sandbox in force: %s cannot be enforced here, so gopi refuses the model's commands: %s",
        sb.mode,
        sb.problem or "no layer confines them"
      ),
      {
        "gopi's sandbox needs Linux with Landlock (lsm=landlock): see gopi's docs/security.md",
        'Or choose sandbox = "off" in setup() to run the commands unconfined',
      }
    )
  else
    h.ok(string.format("the sandbox in force: %s, network %s, enforced by %s", sb.mode, sb.network and "on" or "off", table.concat(sb.layers, ", ")))
  end
end

return M
