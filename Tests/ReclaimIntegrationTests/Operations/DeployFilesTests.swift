import Foundation
import PostgresNIO
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing
import Yams

/// deploy/ cannot run here (no container engine, no Kubernetes): what can be checked without them is checked
/// here: every file parses, and names only real commands and flags, environment variables, config keys,
/// routes and metrics; every SQL query of the Grafana dashboard runs against the real views.
@Suite("deploy/ names what Reclaim has", .poolWatchdog)
struct DeployFilesTests {
    static let root = Binaries.repositoryRoot
    static func read(_ path: String) throws -> String { try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) }

    static func files(under directory: String, extensions: Set<String>) throws -> [String] {
        let base = root.appendingPathComponent(directory)
        var found: [String] = []
        for case let url as URL in FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)?.allObjects ?? []
        where extensions.contains(url.pathExtension) {
            found.append(directory + "/" + url.path.dropFirst(base.path.count + 1))
        }
        return found.sorted()
    }

    /// Every YAML document of deploy/.
    static func documents() throws -> [(file: String, document: Any)] {
        try files(under: "deploy", extensions: ["yaml", "yml"]).flatMap { file in
            try Yams.load_all(yaml: try read(file)).map { (file, $0 as Any) }
        }
    }

    @Test("every YAML file parses; both example configs load and pass validation; every config key is documented")
    func yamlAndConfig() throws {
        let documents = try Self.documents()
        #expect(Set(documents.map(\.file)).count >= 11, "\(documents.map(\.file))")
        let configMap = try #require(
            documents.first { ($0.document as? [String: Any])?["kind"] as? String == "ConfigMap" }?.document as? [String: Any]
        )
        let inCluster = try #require((configMap["data"] as? [String: Any])?["config.yaml"] as? String)
        // docs/configuration.md's table, the one reference for keys (DocsContractTests holds it to the code).
        let documented = Set(DocsContractTests.keyTable.map(\.key))
        #expect(!documented.isEmpty)
        for (name, text) in [("deploy/config.example.yaml", try Self.read("deploy/config.example.yaml")), ("configmap config.yaml", inCluster)] {
            let config = try ReclaimConfig.parse(yaml: text, source: name)
            #expect(!config.apps.isEmpty, "\(name)")
            let undocumented = try Self.keyPaths(try Self.yaml(text)).subtracting(documented)
            #expect(undocumented.isEmpty, "\(name) names keys docs/configuration.md does not document: \(undocumented.sorted())")
        }
    }

    @Test("every command line names real subcommands and flags; every environment variable is one Reclaim reads")
    func commandsAndEnvironment() async throws {
        var commands: [[String]] = []
        var variables = Set<String>()
        func visit(_ value: Any) {
            if let map = value as? [String: Any] {
                if let args = (map["args"] ?? map["command"]) as? [String], args.first.map({ !["sleep", "sh"].contains($0) }) == true {
                    commands.append(args)
                }
                // Only containers of Reclaim's image (compose's postgres service has its own variables).
                let isReclaim = (map["image"] as? String)?.contains("reclaim") == true || map["build"] != nil
                if isReclaim, let env = map["env"] as? [[String: Any]] { variables.formUnion(env.compactMap { $0["name"] as? String }) }
                if isReclaim, let env = map["environment"] as? [String: Any] { variables.formUnion(env.keys) }
                map.values.forEach(visit)
            } else if let list = value as? [Any] {
                list.forEach(visit)
            }
        }
        for (_, document) in try Self.documents() { visit(document) }
        for unit in try Self.files(under: "deploy/systemd", extensions: ["service"]) {
            for line in try Self.read(unit).split(separator: "\n") {
                if line.hasPrefix("ExecStart=/usr/local/bin/reclaim ") { commands.append(line.split(separator: " ").dropFirst().map(String.init)) }
                if line.hasPrefix("Environment=") { variables.insert(String(line.dropFirst("Environment=".count).prefix { $0 != "=" })) }
            }
        }
        #expect(commands.count >= 10, "\(commands)")
        for command in commands {
            let subcommand = command.prefix { !$0.hasPrefix("-") }
            let help = try await runProcess(try Binaries.path("reclaim"), Array(subcommand) + ["--help"])
            #expect(help.status == 0, "reclaim \(subcommand.joined(separator: " ")) is not a command: \(help.output)\(help.errors)")
            for flag in command where flag.hasPrefix("--") {
                #expect(help.output.contains(flag), "reclaim \(subcommand.joined(separator: " ")) has no \(flag)")
            }
        }
        // Read by the Swift runtime, not by Reclaim.
        let runtime: Set<String> = ["SWIFT_BACKTRACE"]
        let read = try Self.files(under: "Sources", extensions: ["swift"]).reduce(into: Set<String>()) { names, file in
            for match in try Self.read(file).matches(of: /environment\["([A-Z_]+)"\]/) { names.insert(String(match.output.1)) }
        }
        let unknown = variables.subtracting(read).subtracting(runtime)
        #expect(unknown.isEmpty, "deploy/ sets environment variables Reclaim never reads: \(unknown.sorted())")
        #expect(variables.isSuperset(of: ["DATABASE_URL", "RECLAIM_CONFIG", "LOG_FORMAT"]))
    }

    @Test("probes and scrapes name real routes; alerts and dashboards name real metrics")
    func routesAndMetrics() throws {
        let openapi = try #require(try Self.yaml(try Self.read("openapi.yaml")) as? [String: Any])
        let routes = Set(try #require(openapi["paths"] as? [String: Any]).keys)
        var paths = Set<String>()
        func visit(_ value: Any) {
            if let map = value as? [String: Any] {
                if let get = map["httpGet"] as? [String: Any], let path = get["path"] as? String { paths.insert(path) }
                if let path = map["prometheus.io/path"] as? String { paths.insert(path) }
                map.values.forEach(visit)
            } else if let list = value as? [Any] {
                list.forEach(visit)
            }
        }
        for (_, document) in try Self.documents() { visit(document) }
        #expect(paths.isSuperset(of: ["/healthz", "/readyz", "/metrics"]), "\(paths)")
        #expect(paths.isSubset(of: routes), "probes name routes the server does not have: \(paths.subtracting(routes))")

        // Metric names: every one the alerts and the dashboard use is a label in Sources, or Hummingbird's own.
        let sources = try Self.files(under: "Sources", extensions: ["swift"]).map { try Self.read($0) }.joined()
        let defined = Set(sources.matches(of: /label: "([a-z0-9_]+)"/).map { String($0.output.1) }).union([
            "hb_requests", "http_server_request_duration",
        ])
        let queries = try Self.read("deploy/prometheus/reclaim-alerts.yaml") + Self.read("deploy/grafana/reclaim-dashboard.json")
        let used = Set(queries.matches(of: /\b(reclaim_[a-z0-9_]+|hb_requests|http_server_request_duration[a-z_]*)\b/).map { String($0.output.1) })
        let undefined = used.filter { name in
            !defined.contains(name)
                && !["_bucket", "_sum", "_count"].contains { name.hasSuffix($0) && defined.contains(String(name.dropLast($0.count))) }
        }
        #expect(used.count >= 15, "\(used.sorted())")
        #expect(undefined.isEmpty, "alerts or dashboards use metrics Reclaim does not export: \(undefined.sorted())")
        let alerts = try #require(try Self.yaml(try Self.read("deploy/prometheus/reclaim-alerts.yaml")) as? [String: Any])
        let rules = (alerts["groups"] as? [[String: Any]] ?? []).flatMap { $0["rules"] as? [[String: Any]] ?? [] }
        #expect(rules.count >= 5)
        #expect(rules.allSatisfy { $0["alert"] is String && $0["expr"] is String })
        // Alerts that fire wherever Prometheus found Reclaim: no expression depends on the scrape job's name (pod
        // discovery names it otherwise), and the metrics that are not Reclaim's alone are joined to its build info.
        let operations = try Self.read("docs/operations.md")
        for rule in rules {
            let name = rule["alert"] as? String ?? ""
            let expr = rule["expr"] as? String ?? ""
            #expect(!expr.contains("job="), "\(name) selects a job: \(expr)")
            if expr.contains("hb_requests") || expr.contains("up ") {
                #expect(expr.contains("reclaim_build_info"), "\(name) does not find Reclaim's targets by reclaim_build_info: \(expr)")
            }
            let url = (rule["annotations"] as? [String: Any])?["runbook_url"] as? String ?? ""
            #expect(url.contains("$externalLabels.runbook_base_url") && url.contains("\"https://"), "\(name): \(url)")
            let anchor = String(url.split(separator: "#").last ?? "")
            #expect(anchor == name.lowercased() && operations.contains("### \(name)\n"), "\(name): no section #\(anchor) in docs/operations.md")
        }
    }

    @Test(
        "Kubernetes: the HPA owns the API's count, both roles have a disruption budget and migrate first in an init container of their own image (no immutable Job), no placeholder Secret is applied, the Ingress exposes Apple's and the app's routes only (the admin API opt-in); compose builds once, gives /tmp a tmpfs, and fits max_connections"
    )
    func kubernetesAndCompose() throws {
        func objects(_ folder: String) throws -> [[String: Any]] {
            try Self.files(under: folder, extensions: ["yaml"]).flatMap { try Yams.load_all(yaml: try Self.read($0)) }.compactMap {
                $0 as? [String: Any]
            }
        }
        // deploy/kubernetes/ as `kubectl apply -k` applies it: the resources its kustomization lists, with the images
        // its `images:` sets. A Kustomization is not a resource (`apply -f` of the folder would fail on it), and a
        // manifest it does not list would never be applied: every other file of the folder must be listed.
        let kustomization = try #require(try Self.yaml(try Self.read("deploy/kubernetes/kustomization.yaml")) as? [String: Any])
        #expect(kustomization["kind"] as? String == "Kustomization")
        let resources = kustomization["resources"] as? [String] ?? []
        let folderFiles = try Self.files(under: "deploy/kubernetes", extensions: ["yaml"]).map { String($0.split(separator: "/").last ?? "") }
        #expect(
            Set(resources) == Set(folderFiles).subtracting(["kustomization.yaml"]),
            "kustomization.yaml lists \(resources.sorted()), the folder holds \(folderFiles.sorted())"
        )
        let applied = try resources.flatMap { try Yams.load_all(yaml: try Self.read("deploy/kubernetes/\($0)")) }.compactMap { $0 as? [String: Any] }
        func spec(_ object: [String: Any]) -> [String: Any] { object["spec"] as? [String: Any] ?? [:] }
        func name(_ object: [String: Any]) -> String { (object["metadata"] as? [String: Any])?["name"] as? String ?? "" }
        // `kustomize edit set image ghcr.io/example/reclaim=…` must reach every container (servers, the migrate init
        // containers, the CronJob's): each names the placeholder that `images:` rewrites.
        let images = kustomization["images"] as? [[String: Any]] ?? []
        let placeholders = Set(images.compactMap { $0["name"] as? String })
        #expect(placeholders == ["ghcr.io/example/reclaim"], "\(images)")
        func containers(_ object: [String: Any]) -> [[String: Any]] {
            var pod = (spec(object)["template"] as? [String: Any]).map(spec) ?? [:]
            if object["kind"] as? String == "CronJob" {
                let job = (spec(object)["jobTemplate"] as? [String: Any]).map(spec) ?? [:]
                pod = (job["template"] as? [String: Any]).map(spec) ?? [:]
            }
            return (pod["initContainers"] as? [[String: Any]] ?? []) + (pod["containers"] as? [[String: Any]] ?? [])
        }
        let named = applied.flatMap(containers).compactMap { $0["image"] as? String }
        #expect(named.count == 5, "two servers, two migrate init containers and the prune job: \(named)")
        for image in named {
            let withoutTag = image.split(separator: ":").first.map(String.init) ?? image
            #expect(placeholders.contains(withoutTag), "\(image) is not rewritten by kustomization.yaml's images:")
        }
        let hpa = try #require(applied.first { $0["kind"] as? String == "HorizontalPodAutoscaler" })
        let scaled = (spec(hpa)["scaleTargetRef"] as? [String: Any])?["name"] as? String
        let deployment = try #require(applied.first { $0["kind"] as? String == "Deployment" && name($0) == scaled })
        #expect(spec(deployment)["replicas"] == nil, "kubectl apply would reset the HPA's count")
        let budgets = applied.filter { $0["kind"] as? String == "PodDisruptionBudget" }
        let components = Set(
            budgets.compactMap {
                ((spec($0)["selector"] as? [String: Any])?["matchLabels"] as? [String: Any])?["app.kubernetes.io/component"] as? String
            }
        )
        #expect(components == ["api", "worker"], "\(components)")
        #expect(!applied.contains { $0["kind"] as? String == "Secret" }, "placeholders would overwrite real Secrets on every apply")
        // An upgrade is `kubectl apply` with a new image: a Job's pod template is immutable (the apply would fail on
        // it), so each Deployment's pods migrate first, in an init container of the same image as their server.
        #expect(!applied.contains { $0["kind"] as? String == "Job" }, "a Job's pod template is immutable: an apply with a new image fails on it")
        let deployments = applied.filter { $0["kind"] as? String == "Deployment" }
        #expect(Set(deployments.map(name)) == ["reclaim-api", "reclaim-worker"])
        for deployment in deployments {
            let pod = (spec(deployment)["template"] as? [String: Any]).map(spec) ?? [:]
            let servers = pod["containers"] as? [[String: Any]] ?? []
            let inits = pod["initContainers"] as? [[String: Any]] ?? []
            #expect(servers.count == 1, "\(name(deployment))")
            #expect(inits.count == 1 && inits.first?["args"] as? [String] == ["migrate"], "\(name(deployment)): \(inits)")
            #expect(inits.first?["image"] as? String == servers.first?["image"] as? String, "\(name(deployment)): migrate runs the server's image")
        }

        let examples = try objects("deploy/kubernetes-examples")
        #expect(examples.contains { $0["kind"] as? String == "Secret" })
        let ingress = try #require(examples.first { $0["kind"] as? String == "Ingress" })
        let rules = spec(ingress)["rules"] as? [[String: Any]] ?? []
        let paths = rules.flatMap { (($0["http"] as? [String: Any])?["paths"] as? [[String: Any]]) ?? [] }.compactMap { $0["path"] as? String }
        // Apple's routes and the app's only: never /metrics, /console, or the admin API (/v1/grants: opt-in, commented out).
        #expect(paths == ["/v1/apple/", "/v1/offers"], "only Apple's and the app's routes from the Internet: \(paths)")
        #expect(!paths.contains { "/v1/grants".hasPrefix($0) || $0.hasPrefix("/v1/grants") }, "the admin API is opt-in: \(paths)")

        let compose = try #require(try Self.yaml(try Self.read("deploy/compose.yaml")) as? [String: Any])
        let services = compose["services"] as? [String: [String: Any]] ?? [:]
        let reclaim = services.filter { ($0.value["image"] as? String)?.hasPrefix("reclaim") == true }
        #expect(Set(reclaim.keys) == ["migrate", "api", "worker"])
        #expect(reclaim.filter { $0.value["build"] != nil }.count == 1, "the image is built once")
        for (service, definition) in reclaim {
            #expect((definition["tmpfs"] as? [String])?.contains { $0.hasPrefix("/tmp") } == true, "\(service): /tmp on a read-only root")
        }
        let command = (services["postgres"]?["command"] as? [String] ?? []).joined(separator: " ")
        let maxConnections = try #require(command.firstMatch(of: /max_connections=(\d+)/).flatMap { Int($0.output.1) })
        // The documented scale: api and up to 4 workers, each with the default server.databaseConnections.
        #expect(maxConnections >= 5 * ReclaimConfig.Server().databaseConnections + 10, "\(maxConnections)")
    }

    @Test(
        "TLS in front (deploy/tls): nginx forwards the Ingress's paths and nothing else; the image's upstream is Compose's api, the host's is reclaim-api.service's port, and each file the Containerfile and reclaim-tls.service name exists"
    )
    func tlsProxy() throws {
        let server = try Self.read("deploy/tls/reclaim-server.conf")
        let forwarded = server.matches(of: /location (\S+) \{ proxy_pass http:\/\/reclaim_api;/).map { String($0.output.1) }
        #expect(forwarded == ["/v1/apple/", "/v1/offers"], "the Ingress's paths, as DeployFiles' Kubernetes test holds them: \(forwarded)")
        #expect(server.contains("location / { return 404; }"), "everything else refused")

        let image = try Self.read("deploy/tls/nginx.conf")
        let compose = try #require(try Self.yaml(try Self.read("deploy/compose.yaml")) as? [String: Any])
        #expect((compose["services"] as? [String: Any])?["api"] != nil)
        #expect(image.contains("upstream reclaim_api { server api:8080;"), "Compose's service api on 8080")
        #expect(image.contains("listen 8443 ssl;") && image.contains("include /etc/nginx/reclaim-server.conf;"))

        let host = try Self.read("deploy/tls/reclaim-host.conf")
        let apiUnit = try Self.read("deploy/systemd/reclaim-api.service")
        let port = try #require(apiUnit.firstMatch(of: /ExecStart=\/usr\/local\/bin\/reclaim serve --role api --port (\d+)/)?.output.1)
        #expect(host.contains("upstream reclaim_api { server 127.0.0.1:\(port);"), "reclaim-api.service listens on \(port)")
        #expect(host.contains("listen 443 ssl;") && host.contains("include /etc/nginx/reclaim-server.conf;"))
        // journald's stdout is a socket, which nginx cannot open as /dev/stdout (deploy-check saw it fail to start).
        #expect(!host.contains("access_log /dev/stdout"))

        let unit = try Self.read("deploy/tls/reclaim-tls.service")
        #expect(unit.contains("install -m 0644 reclaim-host.conf /etc/nginx/reclaim.conf"))
        #expect(unit.contains("ExecStart=/usr/sbin/nginx -c /etc/nginx/reclaim.conf"))
        for file in ["nginx.conf", "reclaim-server.conf", "reclaim-proxy.conf", "reclaim-host.conf"] {
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("deploy/tls/\(file)").path), "\(file)")
        }
        let containerfile = try Self.read("deploy/tls/Containerfile")
        #expect(containerfile.contains("COPY nginx.conf /etc/nginx/nginx.conf"))
        #expect(containerfile.contains("COPY reclaim-server.conf reclaim-proxy.conf /etc/nginx/"))
    }

    @Test("every SQL query of the Grafana dashboard runs against the views of a database filled by the corpus")
    func grafanaSQL() async throws {
        let dashboard = try #require(
            try JSONSerialization.jsonObject(with: Data(try Self.read("deploy/grafana/reclaim-dashboard.json").utf8)) as? [String: Any]
        )
        let panels = dashboard["panels"] as? [[String: Any]] ?? []
        // Run as Grafana would with the corpus's environment chosen (the dashboard's default is Production).
        let sql = panels.flatMap { $0["targets"] as? [[String: Any]] ?? [] }.compactMap { $0["rawSql"] as? String }
            .map { $0.replacingOccurrences(of: "$environment", with: "Sandbox") }
        #expect(sql.count >= 5)
        // Business panels never add Sandbox (TestFlight) to Production: each filters on the chosen environment.
        let business = ["offer_funnel_daily", "offer_revenue_daily", "campaign_lift", "campaign_funnel"]
        for query in sql where business.contains(where: { query.contains("reclaim.\($0)") }) {
            #expect(query.contains("environment = 'Sandbox'"), "\(query)")
        }
        let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        let environment = try #require(variables.first { $0["name"] as? String == "environment" })
        #expect((environment["current"] as? [String: Any])?["value"] as? String == "Production")
        // Import asks for the data sources the panels name.
        let inputs = (dashboard["__inputs"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(inputs) == ["DS_PROMETHEUS", "DS_POSTGRES"])
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, _ in
            var rowsSeen = 0
            for query in sql {
                #expect(query.contains("reclaim."), "\(query)")
                do {
                    for try await _ in try await client.query(PostgresQuery(unsafeSQL: query), logger: TestPostgres.logger) { rowsSeen += 1 }
                } catch {
                    Issue.record("the dashboard's query failed: \(String(reflecting: error))\n\(query)")
                }
            }
            #expect(rowsSeen > 0, "no dashboard query returned a row on the processed corpus")
        }
    }

    /// One YAML document; throws when the text holds none.
    static func yaml(_ text: String) throws -> Any {
        guard let loaded = try Yams.load(yaml: text) else { throw PythonCrossCheck.Failure(description: "no YAML document") }
        return loaded
    }

    /// Key paths of a YAML tree, list positions dropped: apps.signingKeys.keyId.
    static func keyPaths(_ node: Any, prefix: String = "") throws -> Set<String> {
        var paths = Set<String>()
        if let map = node as? [String: Any] {
            for (key, value) in map {
                let path = prefix.isEmpty ? key : prefix + "." + key
                paths.insert(path)
                // Free-form maps whose keys are data, not config keys.
                if path == "campaigns.conditions" || path.hasSuffix(".offer") {
                    paths.formUnion(try keyPaths(value, prefix: path))
                    continue
                }
                paths.formUnion(try keyPaths(value, prefix: path))
            }
        } else if let list = node as? [Any] {
            for item in list { paths.formUnion(try keyPaths(item, prefix: prefix)) }
        }
        return paths
    }
}
