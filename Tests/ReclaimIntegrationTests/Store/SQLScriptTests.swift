import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("Splitting SQL scripts into statements", .poolWatchdog)
struct SQLScriptTests {
    @Test("semicolons inside strings, identifiers, dollar bodies and comments do not split")
    func hiddenSemicolons() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE "odd;name" (v text DEFAULT 'a;b''c');
            /* block; comment */ COMMENT ON TABLE x IS 'it''s; fine';
            DO $body$ BEGIN PERFORM 1; END $body$;
            CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;

            """
        let statements = SQLScript.statements(script)
        #expect(statements.count == 4)
        #expect(statements[0].hasSuffix("CREATE TABLE \"odd;name\" (v text DEFAULT 'a;b''c')"))
        #expect(statements[1] == "/* block; comment */ COMMENT ON TABLE x IS 'it''s; fine'")
        #expect(statements[2] == "DO $body$ BEGIN PERFORM 1; END $body$")
        #expect(statements[3] == "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql")
    }

    @Test("schema.sql splits into statements that each start with a SQL keyword")
    func schemaSplits() {
        let statements = SQLScript.statements(SchemaSQL.text)
        #expect(statements.count > 20)
        for statement in statements {
            let firstCode = statement.split(separator: "\n").first { !$0.trimmingPrefix(" ").hasPrefix("--") } ?? ""
            #expect(["CREATE", "COMMENT", "DO"].contains { firstCode.hasPrefix($0) }, "unexpected statement start: \(firstCode)")
        }
    }
}
