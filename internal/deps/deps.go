package deps
import (
 _ "github.com/go-echarts/go-echarts/v2/charts"
 _ "github.com/gocarina/gocsv"
 _ "gopkg.in/yaml.v3"
 _ "github.com/montanaflynn/stats"
 _ "github.com/HdrHistogram/hdrhistogram-go"
 _ "golang.org/x/perf/benchmath"
 _ "github.com/schollz/progressbar/v3"
 _ "golang.org/x/sys/unix"
 _ "golang.org/x/term"
)

