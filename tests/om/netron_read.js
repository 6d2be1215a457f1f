// Open an OM file with Netron's own om.js under Node (no browser) and print what Netron sees.
//
// usage: node netron_read.js <netron package dir> <file.om> [--sizes]
// prints JSON: {format, graphs: [{name, nodes: [{name, type, inputs, outputs, control,
//                                                attributes}], initializers: {name: [bytes]}}]}
// (with --sizes each initializer is its byte count instead: for models with large weights)
//
// Netron's sources are ES modules without a package.json, so the few files om.js needs are
// copied into a temporary folder that declares "type": "module" (spec/om-format.md §10).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const url = require('url');

const FILES = ['om.js', 'om-proto.js', 'om-metadata.json', 'base.js', 'protobuf.js', 'text.js'];

async function main() {
    const [netronDir, omPath, option] = process.argv.slice(2);
    const sizesOnly = option === '--sizes';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'netron-om-'));
    try {
        for (const name of FILES) {
            fs.copyFileSync(path.join(netronDir, name), path.join(dir, name));
        }
        fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}');
        const load = (name) => import(url.pathToFileURL(path.join(dir, name)).href);
        const base = await load('base.js');
        const om = await load('om.js');
        const entries = JSON.parse(fs.readFileSync(path.join(dir, 'om-metadata.json'), 'utf-8'));
        const types = new Map(entries.map((entry) => [entry.name, entry]));
        const context = {
            stream: new base.BinaryStream(new Uint8Array(fs.readFileSync(omPath))),
            value: null,
            set(type, value) {
                this.type = type;
                this.value = value;
                return type;
            },
            async metadata() {
                return { type: (name) => types.get(name) || null };
            },
            async require(id) {
                return load(`${path.basename(id)}.js`);
            }
        };
        const factory = new om.ModelFactory();
        if (!await factory.match(context)) {
            throw new Error('Netron does not recognise the file as an OM.');
        }
        const model = await factory.open(context);
        const valueNames = (args) => args.map((arg) => arg.value.map((v) => v.name));
        const graphs = model.modules.map((graph) => {
            const initializers = new Map();
            const nodes = graph.nodes.map((node) => {
                for (const arg of node.inputs) {
                    for (const value of arg.value) {
                        if (value.initializer) {
                            const data = value.initializer.values;
                            initializers.set(value.name, !data ? null : sizesOnly ? data.length : Array.from(data));
                        }
                    }
                }
                return {
                    name: node.name,
                    type: node.type.name,
                    inputs: valueNames(node.inputs),
                    outputs: valueNames(node.outputs),
                    control: node.controlDependencies.map((v) => v.name),
                    attributes: node.attributes.map((a) => a.name)
                };
            });
            return { name: graph.name, nodes, initializers: Object.fromEntries(initializers) };
        });
        process.stdout.write(`${JSON.stringify({ format: model.format, graphs })}\n`);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

main().catch((error) => {
    process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
    process.exit(1);
});
