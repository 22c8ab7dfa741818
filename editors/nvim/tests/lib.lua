-- What both test files share: running or skipping a test, assertions, and
-- the closing "N passed, N failed" line CI reads (", N skipped" after it
-- when a test could not run here).
local M = { passed = 0, failed = 0, skipped = 0 }

--- Runs fn(...) as the test name and reports it.
function M.run(name, fn, ...)
  local ok, err = xpcall(fn, debug.traceback, ...)
  if ok then
    M.passed = M.passed + 1
    io.stdout:write("ok - " .. name .. "\n")
  else
    M.failed = M.failed + 1
    io.stdout:write("not ok - " .. name .. "\n    " .. tostring(err):gsub("\n", "\n    ") .. "\n")
  end
end

--- Reports the test name as skipped, and why (TAP's "# SKIP").
function M.skip(name, reason)
  M.skipped = M.skipped + 1
  io.stdout:write("ok - " .. name .. " # SKIP " .. reason .. "\n")
end

function M.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(string.format("%s: want %s, got %s", what or "value", vim.inspect(want), vim.inspect(got)), 2)
  end
end

function M.ok(cond, what)
  if not cond then
    error(what or "assertion failed", 2)
  end
end

--- Prints the closing line and exits 1 on any failure.
function M.finish()
  local skipped = M.skipped > 0 and string.format(", %d skipped", M.skipped) or ""
  io.stdout:write(string.format("%d passed, %d failed%s\n", M.passed, M.failed, skipped))
  os.exit(M.failed == 0 and 0 or 1)
end

return M
