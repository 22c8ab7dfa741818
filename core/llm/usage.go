package llm

// Usage counts the tokens of one model call and what they cost, in dollars.
type Usage struct {
	Input       int  `json:"input"`
	Output      int  `json:"output"`
	CacheRead   int  `json:"cacheRead"`
	CacheWrite  int  `json:"cacheWrite"`
	TotalTokens int  `json:"totalTokens"`
	Cost        Cost `json:"cost"`
}

// Cost is a dollar amount split like [Usage].
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	// Total is the best figure known: what the provider billed when it
	// said so, else the sum of the four above.
	Total float64 `json:"total"`
	// TotalFromProvider says which of the two Total is (pi 1.5): true for
	// the provider's own figure, false for the catalog estimate, nil (left
	// out) when no cost was worked out from reported usage, as in pi.
	TotalFromProvider *bool `json:"totalFromProvider,omitempty"`
}

// ApplyCost fills u.Cost from the model's per-million prices and sets
// TotalTokens to the sum of the four counts. With a model, the total is
// then the catalog's estimate (TotalFromProvider false).
func (u *Usage) ApplyCost(m *Model) {
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	if m == nil {
		return
	}
	u.Cost.Input = m.Cost.Input / 1e6 * float64(u.Input)
	u.Cost.Output = m.Cost.Output / 1e6 * float64(u.Output)
	u.Cost.CacheRead = m.Cost.CacheRead / 1e6 * float64(u.CacheRead)
	u.Cost.CacheWrite = m.Cost.CacheWrite / 1e6 * float64(u.CacheWrite)
	u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
	u.Cost.TotalFromProvider = new(false)
}

// ContextTokens is how much of the context window the call used: everything
// the model read plus what it wrote.
func (u Usage) ContextTokens() int {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// Add sums o into u, counts and costs alike (the usage of several calls).
// The sum's total is the provider's only when both parts' are (pi's
// combineUsage).
func (u *Usage) Add(o Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.TotalTokens += o.TotalTokens
	u.Cost.Input += o.Cost.Input
	u.Cost.Output += o.Cost.Output
	u.Cost.CacheRead += o.Cost.CacheRead
	u.Cost.CacheWrite += o.Cost.CacheWrite
	u.Cost.Total += o.Cost.Total
	u.Cost.TotalFromProvider = new(isTrue(u.Cost.TotalFromProvider) && isTrue(o.Cost.TotalFromProvider))
}

func isTrue(b *bool) bool { return b != nil && *b }
