package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// panelSource is the part of Prometheus' HTTP API Grafana's data source calls.
type panelSource struct{ base string }

type promSeries struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`  // instant: [ts, "v"]
	Values [][]any           `json:"values"` // range: [[ts, "v"], …]
}

func (p panelSource) fetch(path string, params url.Values, into any) error {
	resp, err := http.Get(p.base + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s: %s", path, body.Error)
	}
	return json.Unmarshal(body.Data, into)
}

// query runs expr as Grafana would for a panel target: an instant query at the range's end, or
// a range query over it at its step.
func (p panelSource) query(expr string, instant bool, tr timeRange) ([]promSeries, error) {
	params := url.Values{"query": {expr}}
	path := "/api/v1/query_range"
	if instant {
		path = "/api/v1/query"
		params.Set("time", unix(tr.to))
	} else {
		params.Set("start", unix(tr.from))
		params.Set("end", unix(tr.to))
		params.Set("step", strconv.FormatFloat(tr.step.Seconds(), 'f', -1, 64))
	}
	var data struct {
		Result []promSeries `json:"result"`
	}
	err := p.fetch(path, params, &data)
	return data.Result, err
}

// labelValues lists label's values on the series matching selector over the range, as
// label_values(selector, label) does.
func (p panelSource) labelValues(label, selector string, tr timeRange) ([]string, error) {
	params := url.Values{"start": {unix(tr.from)}, "end": {unix(tr.to)}}
	if selector != "" {
		params.Set("match[]", selector)
	}
	var values []string
	err := p.fetch("/api/v1/label/"+url.PathEscape(label)+"/values", params, &values)
	return values, err
}

func unix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
