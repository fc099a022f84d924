package acpcmd

import "strings"

// reasoningEfforts are the reasoning efforts each of models takes, for
// the session config option (agent.Config.ReasoningEfforts): OpenAI's
// o-series take low, medium and high, GPT-5 minimal too; DeepSeek's API
// has no effort parameter, so its models offer none. The stand-in model
// offers low, medium and high so that recorded fixtures exercise the
// option (its server ignores it).
func reasoningEfforts(models []string) map[string][]string {
	out := map[string][]string{}
	for _, m := range models {
		switch {
		case m == "standin", strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
			out[m] = []string{"low", "medium", "high"}
		case strings.HasPrefix(m, "gpt-5"):
			out[m] = []string{"minimal", "low", "medium", "high"}
		}
	}
	return out
}
