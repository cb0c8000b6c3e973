export interface Server {
  id: string;
  orgId: string;
  name: string;
  regionId: string;
  zoneId: string;
  /** servers.md's status (a creating or deleting server takes no disk); absent where the adapter does not know it. */
  status?: string;
  createdAt: Date;
  deletedAt: Date | null;
}
