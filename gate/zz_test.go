package gate
import ("context";"testing";"fmt";"os"
"github.com/open-policy-agent/opa/v1/profiler"
"github.com/open-policy-agent/opa/v1/rego")
func TestZZProfile(t *testing.T){
	eng, err := New(context.Background(), Options{Policy: testPolicy(), Home: "/home/u"})
	if err != nil { t.Fatal(err) }
	c := Context{Autonomy: "supervised", Workspace: "/home/u/ws", Cwd: "/home/u/ws", Home: "/home/u", Channel: "cli"}
	idx := os.Getenv("ZZ")
	var acts []Action
	if idx == "time" { acts = []Action{{Tool:"time",Args:map[string]any{}}} } else { acts = benchActions }
	p := profiler.New()
	cc := eng.cur.Load()
	for i:=0;i<2000;i++ {
		in := BuildInput(acts[i%len(acts)], c)
		val, _ := inputValue(in)
		cc.pq.Eval(context.Background(), rego.EvalParsedInput(val), rego.EvalQueryTracer(p))
	}
	for _, s := range p.ReportTopNResults(30, []string{"total_time_ns"}) {
		fmt.Printf("%8dns %6d %s:%d\n", s.ExprTimeNs/2000, s.NumEval, s.Location.File, s.Location.Row)
	}
}
