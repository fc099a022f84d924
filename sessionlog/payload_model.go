package sessionlog

// TypeModelSelected is reel's record of a model chosen for a session (an
// editor's model picker): the session's model calls use Model from the
// next step on, whose request header is then a "change" one. dsh has no
// such record; other readers keep it verbatim. Log-only (no surface op).
const TypeModelSelected = "model/selected"

// ModelSelectedData is the data of model/selected: Model was chosen, by
// Source ("client": the editor's session/set_config_option), with
// ReasoningEffort, the reasoning effort its calls ask for ("" for the
// provider's default; reel's own field, absent when empty).
type ModelSelectedData struct {
	Model           string `json:"model"`
	Source          string `json:"source"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
}

// AppendJSON appends {"model","source","reasoningEffort"?}.
func (d ModelSelectedData) AppendJSON(b []byte) []byte {
	b = append(b, `{"model":`...)
	b = AppendString(b, d.Model)
	b = append(b, `,"source":`...)
	b = AppendString(b, d.Source)
	if d.ReasoningEffort != "" {
		b = append(b, `,"reasoningEffort":`...)
		b = AppendString(b, d.ReasoningEffort)
	}
	return append(b, '}')
}
