/** wrangler and the workerd test pool bundle jqjs's source as text (a `Text` rule in wrangler.toml), to run it in QuickJS. */
declare module "@michaelhomer/jqjs/jq.js" {
  const source: string;
  export default source;
}
