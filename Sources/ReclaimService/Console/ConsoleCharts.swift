/// Small inline SVG charts for /console, drawn from numbers only. Every label is escaped here, because the page
/// inserts the SVG unescaped.
enum ConsoleCharts {
    /// Notifications per hour over the last 24 hours, oldest on the left. `perHourAgo[0]` is the current hour.
    static func hourly(_ perHourAgo: [Int]) -> String {
        let values = Array(perHourAgo.reversed())
        let width = 480.0
        let height = 90.0
        let top = max(values.max() ?? 0, 1)
        let slot = width / Double(max(values.count, 1))
        var bars = ""
        for (index, value) in values.enumerated() {
            let barHeight = (height - 20) * Double(value) / Double(top)
            let x = Double(index) * slot + 1
            let hoursAgo = values.count - 1 - index
            bars +=
                #"<rect x="\#(format(x))" y="\#(format(height - 14 - barHeight))" width="\#(format(slot - 2))" height="\#(format(barHeight))" fill="var(--bar)"><title>\#(value) in the hour \#(hoursAgo) h ago</title></rect>"#
        }
        return
            #"<svg role="img" aria-label="notifications per hour, last 24 hours" viewBox="0 0 \#(format(width)) \#(format(height))" width="\#(format(width))" height="\#(format(height))">\#(bars)<text x="0" y="\#(format(height - 2))">24 h ago</text><text x="\#(format(width))" y="\#(format(height - 2))" text-anchor="end">now (peak \#(top)/h)</text></svg>"#
    }

    /// One campaign's funnel as horizontal bars: issued, delivered, shown, redeemed.
    static func funnel(_ steps: [(label: String, value: Int)]) -> String {
        let width = 480.0
        let row = 18.0
        let labelWidth = 80.0
        let top = max(steps.map(\.value).max() ?? 0, 1)
        var body = ""
        for (index, step) in steps.enumerated() {
            let y = Double(index) * row
            let barWidth = (width - labelWidth - 50) * Double(step.value) / Double(top)
            body += #"<text x="0" y="\#(format(y + 13))">\#(escape(step.label))</text>"#
            body +=
                #"<rect x="\#(format(labelWidth))" y="\#(format(y + 3))" width="\#(format(barWidth))" height="\#(format(row - 6))" fill="var(--bar2)"></rect>"#
            body += #"<text x="\#(format(labelWidth + barWidth + 4))" y="\#(format(y + 13))">\#(step.value)</text>"#
        }
        let height = Double(steps.count) * row
        return
            #"<svg role="img" aria-label="offer funnel" viewBox="0 0 \#(format(width)) \#(format(height))" width="\#(format(width))" height="\#(format(height))">\#(body)</svg>"#
    }

    /// Text for HTML and SVG: the five characters with meaning there, escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    private static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        guard rounded.isFinite, abs(rounded) < 1e15 else { return "0" }
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
